#define _GNU_SOURCE
#include "CTetherSystem.h"
#include "ExtensionWorld.h"

#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* An extension's own world, made by the spawn's child between clone and
   exec: bubblewrap's steps (setup_newroot), in raw system calls only (the
   child shares the host's memory: no malloc, no locks). The child is in
   new user, mount, PID, IPC and cgroup namespaces (and a network one when
   offline) from its clone; here it maps its ids to themselves, builds a
   root on a tmpfs from the steps and moves it over the old root.

   No pivot_root, unlike bubblewrap: it visits every thread on the
   machine (to move their root and directory references), which with a
   thousand extensions running was a third of a launch's world, and grows
   with each. The new root is moved over the old one and entered with
   chroot, as switch_root does: what lies beneath is covered, out of
   reach of any path, and the process that execs holds no capability to
   uncover it (no CAP_SYS_CHROOT or CAP_SYS_ADMIN, even in its own user
   namespace: the spawn drops them all for a world, and seccomp refuses
   mount and chroot besides). The sources are opened before the new
   root's tmpfs covers the staging directory, and bound from there. */

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#define WORLD_OPEN_TREE_CLONE 1
#define WORLD_MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define WORLD_ATTR_RDONLY 0x00000001ULL
#define WORLD_ATTR_NOSUID 0x00000002ULL
#define WORLD_ATTR_NODEV 0x00000004ULL
#define WORLD_ATTR_NOEXEC 0x00000008ULL
struct world_mount_attr { unsigned long long attr_set, attr_clr, propagation, userns_fd; };

/* The new root's tmpfs covers the staging directory; steps name their
   targets beneath it. Sources are reached by descriptor. */
enum { PATH_BYTES = 4096, SOURCES_MAX = 256 };

static int fail(struct tether_world *world, int step, int error) {
    world->failed_step = step;
    world->error = error ? error : EIO;
    return -world->error;
}

static int join(char *out, const char *prefix, const char *path) {
    size_t first = strlen(prefix), second = strlen(path);
    if (first + second + 1 > PATH_BYTES) return -ENAMETOOLONG;
    memcpy(out, prefix, first);
    memcpy(out + first, path, second + 1);
    return 0;
}

static int write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    size_t length = strlen(text);
    ssize_t written = write(fd, text, length);
    int error = errno;
    close(fd);
    if (written < 0) return -error;
    return (size_t)written == length ? 0 : -EIO;
}

/* "ID ID 1\n": the id maps to itself, the only mapping an unprivileged
   process may write for its own namespace. */
static void id_map(char out[32], unsigned id) {
    char digits[12];
    int count = 0;
    do { digits[count++] = (char)('0' + id % 10); id /= 10; } while (id > 0);
    int at = 0;
    for (int copy = 0; copy < 2; copy++) {
        for (int i = count - 1; i >= 0; i--) out[at++] = digits[i];
        out[at++] = ' ';
    }
    out[at++] = '1';
    out[at++] = '\n';
    out[at] = 0;
}

/* The directory the last step's target is in, known to be there: most
   steps land beside the one before (20 in /etc), and each mkdir is a path
   walk. No directory it holds is removed while the root is built (the
   mask's, removed, is never the last step's). */
struct known_directory { char path[PATH_BYTES]; size_t length; };

/* Every directory of `path` (a buffer it may write to) up to and, with
   `whole`, including its last component. Its parent is tried first, if it
   is not `known` or above it. */
static int make_directories(char *path, int whole, mode_t mode, struct known_directory *known) {
    char *last = strrchr(path, '/');
    if (last && last != path) {
        size_t length = (size_t)(last - path);
        *last = 0;
        /* The known directory, or one above it, is there. */
        int there = length <= known->length && memcmp(path, known->path, length) == 0
            && (length == known->length || known->path[length] == '/');
        int rc = there ? 0 : mkdir(path, 0755);
        int error = errno;
        if (!there && (rc == 0 || error == EEXIST)) {
            memcpy(known->path, path, length + 1);
            known->length = length;
        }
        *last = '/';
        if (rc == 0 || error == EEXIST) {
            if (whole && mkdir(path, mode) < 0 && errno != EEXIST) return -errno;
            return 0;
        }
    }
    for (char *at = path + 1; *at; at++) {
        if (*at != '/') continue;
        *at = 0;
        int rc = mkdir(path, 0755);
        *at = '/';
        if (rc < 0 && errno != EEXIST) return -errno;
    }
    if (whole && mkdir(path, mode) < 0 && errno != EEXIST) return -errno;
    return 0;
}

/* Mount attributes on what is mounted at `path`, and beneath when
   `recursive`; before Linux 5.12, a remount of the top alone that keeps
   the flags the kernel locked (a user namespace may not clear them). */
static int set_attributes(const char *path, unsigned long long attributes, int recursive) {
    struct world_mount_attr attr = {attributes, 0, 0, 0};
    if (syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &attr, sizeof attr) == 0) return 0;
    if (errno != ENOSYS) return -errno;
    struct statfs status;
    if (statfs(path, &status) < 0) return -errno;
    unsigned long flags = MS_REMOUNT | MS_BIND;
    unsigned long kept = (unsigned long)status.f_flags;
    if ((attributes & WORLD_ATTR_RDONLY) || (kept & ST_RDONLY)) flags |= MS_RDONLY;
    if ((attributes & WORLD_ATTR_NOSUID) || (kept & ST_NOSUID)) flags |= MS_NOSUID;
    if ((attributes & WORLD_ATTR_NODEV) || (kept & ST_NODEV)) flags |= MS_NODEV;
    if ((attributes & WORLD_ATTR_NOEXEC) || (kept & ST_NOEXEC)) flags |= MS_NOEXEC;
    if (kept & ST_NOATIME) flags |= MS_NOATIME;
    if (kept & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (kept & ST_RELATIME) flags |= MS_RELATIME;
    return mount(NULL, path, NULL, flags, NULL) < 0 ? -errno : 0;
}

/* "/proc/self/fd/N": a path the kernel resolves to what descriptor N
   holds, for mount(2)'s source (before Linux 5.2: no open_tree). */
static void descriptor_path(char out[32], int fd) {
    static const char prefix[] = "/proc/self/fd/";
    memcpy(out, prefix, sizeof prefix - 1);
    char digits[12];
    int count = 0;
    do { digits[count++] = (char)('0' + fd % 10); fd /= 10; } while (fd > 0);
    int at = sizeof prefix - 1;
    while (count > 0) out[at++] = digits[--count];
    out[at] = 0;
}

/* A bind's source, opened before the new root covers it: a detached copy
   of its mounts (Linux 5.2+), else an O_PATH descriptor. -errno. */
static int open_source(const char *path, int *detached) {
    if (*detached) {
        int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, WORLD_OPEN_TREE_CLONE | AT_RECURSIVE | O_CLOEXEC);
        if (fd >= 0) return fd;
        /* Not in this kernel, or refused by a filter outside: as before 5.2. */
        if (errno != ENOSYS && errno != EPERM) return -errno;
        *detached = 0;
    }
    int fd = open(path, O_PATH | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* What `source` (from open_source; `detached`: by open_tree) holds, bound
   at `target` (made as a directory or an empty file, like it), then its
   attributes. */
static int bind(int source, int detached, char *target, unsigned long long attributes,
                struct known_directory *known) {
    struct stat status;
    if (fstat(source, &status) < 0) return -errno;
    int rc = make_directories(target, S_ISDIR(status.st_mode), 0755, known);
    if (rc < 0) return rc;
    if (!S_ISDIR(status.st_mode)) {
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) return -errno;
        close(fd);
    }
    if (detached) {
        /* A path through /proc/self/fd costs the kernel more than the bind. */
        if (syscall(SYS_move_mount, source, "", AT_FDCWD, target, WORLD_MOVE_MOUNT_F_EMPTY_PATH) < 0) return -errno;
    } else {
        char path[32];
        descriptor_path(path, source);
        if (mount(path, target, NULL, MS_BIND | MS_REC, NULL) < 0) return -errno;
    }
    return set_attributes(target, attributes, 1);
}

/* An empty directory of the root's bound over `target`, read-only, then
   removed: a removed directory holds nothing and takes nothing new, and
   it is no file system to build and tear down. (A bind at its name fails.) */
static int mask(const char *root, char *target, int optional) {
    struct stat status;
    if (stat(target, &status) < 0) return optional && errno == ENOENT ? 1 : -errno;
    char empty[PATH_BYTES];
    int rc = join(empty, root, "/.tether-mask");
    if (rc < 0) return rc;
    if (mkdir(empty, 0555) < 0) return -errno;
    if (mount(empty, target, NULL, MS_BIND, NULL) < 0) { int error = errno; rmdir(empty); return -error; }
    if (rmdir(empty) < 0) return -errno;
    return set_attributes(target, WORLD_ATTR_RDONLY | WORLD_ATTR_NOSUID | WORLD_ATTR_NODEV | WORLD_ATTR_NOEXEC, 0);
}

static int is_bind(const struct tether_world_step *step) {
    return step->kind == TETHER_WORLD_READ || step->kind == TETHER_WORLD_WRITE || step->kind == TETHER_WORLD_DEVICE;
}

/* One step, its target under `root`; `source`: a bind's descriptor (-1: an
   optional source that is not there, left out: 1). */
static int run_step(const struct tether_world_step *step, const char *root, int source, int detached, char *target,
                    struct known_directory *known) {
    int rc = join(target, root, step->target);
    if (rc < 0) return rc;
    if (is_bind(step) && source < 0) return 1;
    switch (step->kind) {
    case TETHER_WORLD_READ:
        return bind(source, detached, target, WORLD_ATTR_RDONLY | WORLD_ATTR_NOSUID | WORLD_ATTR_NODEV, known);
    case TETHER_WORLD_WRITE:
        return bind(source, detached, target, WORLD_ATTR_NOSUID | WORLD_ATTR_NODEV, known);
    case TETHER_WORLD_DEVICE:
        return bind(source, detached, target, WORLD_ATTR_NOSUID | WORLD_ATTR_NOEXEC, known);
    case TETHER_WORLD_TMPFS:
        if ((rc = make_directories(target, 1, 0755, known)) < 0) return rc;
        return mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, step->data) < 0 ? -errno : 0;
    case TETHER_WORLD_MASK:
        return mask(root, target, step->optional);
    case TETHER_WORLD_PROC:
        if ((rc = make_directories(target, 1, 0555, known)) < 0) return rc;
        return mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0 ? -errno : 0;
    case TETHER_WORLD_SYMLINK:
        if ((rc = make_directories(target, 0, 0755, known)) < 0) return rc;
        return symlink(step->source, target) < 0 && errno != EEXIST ? -errno : 0;
    case TETHER_WORLD_DIRECTORY:
        return make_directories(target, 1, 0755, known);
    default:
        return -EINVAL;
    }
}

/* Closes the sources' descriptors, then fails (or not: `rc` >= 0). */
static int finish(struct tether_world *world, const int *sources, int count, int step, int rc) {
    for (int index = 0; index < count; index++) {
        if (sources[index] >= 0) close(sources[index]);
    }
    return rc < 0 ? fail(world, step, -rc) : 0;
}

int tether_enter_world(struct tether_world *world, int ruleset) {
    char map[32];
    /* Its ids: setgroups off first, as the kernel requires before an
       unprivileged gid_map. */
    int written = write_text("/proc/self/setgroups", "deny");
    if (written < 0 && written != -ENOENT) return fail(world, TETHER_WORLD_STEP_IDS, -written);
    id_map(map, world->gid);
    if ((written = write_text("/proc/self/gid_map", map)) < 0) return fail(world, TETHER_WORLD_STEP_IDS, -written);
    id_map(map, world->uid);
    if ((written = write_text("/proc/self/uid_map", map)) < 0) return fail(world, TETHER_WORLD_STEP_IDS, -written);

    /* Nothing mounted here reaches the host's namespace, nor back. */
    if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) < 0) return fail(world, TETHER_WORLD_STEP_ROOT, errno);
    if (world->step_count > SOURCES_MAX) return fail(world, TETHER_WORLD_STEP_ROOT, E2BIG);
    /* Every bind's source, before the new root covers what may hold it.
       An optional source that is not there (or not ours to see) is left out. */
    int sources[SOURCES_MAX];
    char detached_of[SOURCES_MAX];
    int detached = 1;
    for (int index = 0; index < world->step_count; index++) {
        const struct tether_world_step *step = &world->steps[index];
        sources[index] = -1;
        detached_of[index] = 0;
        if (!is_bind(step)) continue;
        int fd = open_source(step->source, &detached);
        if (fd < 0 && !step->optional) return finish(world, sources, index, index, fd);
        sources[index] = fd < 0 ? -1 : fd;
        detached_of[index] = (char)detached;
    }
    const char *root = world->staging;
    if (mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755") < 0) {
        return finish(world, sources, world->step_count, TETHER_WORLD_STEP_ROOT, -errno);
    }
    char target[PATH_BYTES];
    /* The root is there. (On the child's stack: it shares the host's
       memory, and other threads may spawn meanwhile.) */
    struct known_directory known;
    known.length = strlen(root);
    if (known.length >= PATH_BYTES) return finish(world, sources, world->step_count, TETHER_WORLD_STEP_ROOT, -ENAMETOOLONG);
    memcpy(known.path, root, known.length + 1);
    for (int index = 0; index < world->step_count; index++) {
        int rc = run_step(&world->steps[index], root, sources[index], detached_of[index], target, &known);
        if (rc < 0) return finish(world, sources, world->step_count, index, rc);
    }
    finish(world, sources, world->step_count, 0, 0);
    /* Landlock's rules were built in the host's view, where a grant on a
       directory above a bind's source covers it; here the walk up from a
       file leaves the bind at its root, for directories of the new root
       no rule names. So each step says what its target is granted (what
       the world shows, read; its TMPDIR and /proc, new file systems, too).
       A grant covers the binds beneath it as well: the host puts none
       beneath what it lets be written. */
    if (ruleset >= 0) {
        for (int index = 0; index < world->step_count; index++) {
            const struct tether_world_step *step = &world->steps[index];
            if (step->landlock < 0 || join(target, root, step->target) < 0) continue;
            int rc = tether_landlock_allow(ruleset, world->landlock_abi, target, step->landlock);
            if (rc < 0 && step->optional) continue;
            if (rc < 0) return fail(world, index, -rc);
        }
    }
    /* The new root over the old one, and the process's root. */
    if (chdir(root) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 || chdir("/") < 0) {
        return fail(world, TETHER_WORLD_STEP_PIVOT, errno);
    }
    /* No user namespace within it (bubblewrap's --disable-userns): one
       would give back CAP_SYS_CHROOT, and a chroot below its root, then
       "..", leads out to the machine's beneath. seccomp refuses them too;
       this holds where there is no filter. (No such limit before Linux 4.9.) */
    int limited = write_text("/proc/sys/user/max_user_namespaces", "0");
    if (limited < 0 && limited != -ENOENT) return fail(world, TETHER_WORLD_STEP_PIVOT, -limited);
    /* Its root holds only mount points: read-only, like bubblewrap's. */
    int rc = set_attributes("/", WORLD_ATTR_RDONLY | WORLD_ATTR_NOSUID | WORLD_ATTR_NODEV, 0);
    if (rc < 0) return fail(world, TETHER_WORLD_STEP_PIVOT, -rc);
    return 0;
}

int tether_world_clone_flags(const struct tether_world *world) {
    return CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWCGROUP
        | (world->own_network ? CLONE_NEWNET : 0);
}

struct probe_arguments { struct tether_world *world; };

static int run_probe(void *argument) {
    struct probe_arguments *shared = argument;
    _exit(tether_enter_world(shared->world, -1) < 0 ? 1 : 0);
}

int tether_world_probe(struct tether_world *world) {
    const size_t stack_size = 64 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -errno;
    struct probe_arguments shared = {world};
    world->error = 0;
    world->failed_step = 0;
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t pid = clone(run_probe, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD | tether_world_clone_flags(world), &shared);
    int clone_error = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    munmap(stack, stack_size);
    if (pid < 0) return fail(world, TETHER_WORLD_STEP_CLONE, clone_error);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (world->error) return -world->error;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : fail(world, TETHER_WORLD_STEP_PIVOT, EIO);
}

#else
#include <errno.h>

int tether_enter_world(struct tether_world *world, int ruleset) {
    (void)ruleset;
    world->failed_step = TETHER_WORLD_STEP_CLONE;
    world->error = ENOSYS;
    return -ENOSYS;
}
int tether_world_clone_flags(const struct tether_world *world) { (void)world; return 0; }
int tether_world_probe(struct tether_world *world) { return tether_enter_world(world, -1); }
#endif
