#define _GNU_SOURCE
#include "CTetherSystem.h"
#include "Confinement.h"
#include "ExtensionWorld.h"

#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
/* CLOSE_RANGE_CLOEXEC, from linux/close_range.h (not in every libc's headers). */
#ifndef CLOSE_RANGE_CLOEXEC_FLAG
#define CLOSE_RANGE_CLOEXEC_FLAG (1U << 2)
#endif
#ifndef CLOSE_RANGE_UNSHARE_FLAG
#define CLOSE_RANGE_UNSHARE_FLAG (1U << 1)
#endif

extern char **environ;

/* What the child shares with its parent (CLONE_VM): the request, and why
   it could not exec. */
struct child_arguments {
    const struct tether_spawn_request *request;
    pid_t parent;
    /* 0, or the child shares the parent's descriptor table (CLONE_FILES)
       and takes a copy of only the descriptors below this one. */
    unsigned unshare_below;
    volatile int error;
    /* Set when the child could take no table of its own (both system calls
       refused, as an outer seccomp filter may): the parent spawns again
       without sharing, and keeps to that. */
    volatile int could_not_unshare;
};

/* Tells the parent why the child could not exec, then ends the child. */
__attribute__((noreturn)) static void report_and_exit(struct child_arguments *shared, int error) {
    shared->error = error;
    _exit(127);
}

/* Everything here runs in the parent's memory (CLONE_VM), on a stack of its
   own, while the parent waits (CLONE_VFORK), before exec: raw system calls
   only (no malloc, no locks, no Swift), as posix_spawn does. Its signal
   handlers are its own copies; its descriptors are the parent's table
   until it takes its own (see tether_spawn). */
static int run_child(void *argument) {
    struct child_arguments *shared = argument;
    const struct tether_spawn_request *request = shared->request;
    pid_t parent = shared->parent;
    /* Handlers the parent installed would run parent code here; exec resets
       handled signals but keeps ignored ones ignored (SIGPIPE), so every
       signal goes back to its default, then the mask is cleared. */
    /* The raw syscall: glibc's sigaction refuses its own signals (32, 33),
       which a parent may still have ignored. An all-zero kernel sigaction
       is SIG_DFL with no flags and an empty mask, whatever its layout. */
    unsigned long fallback[4] = {0, 0, 0, 0};
    for (int signal = 1; signal <= 64; signal++) {
        if (signal != SIGKILL && signal != SIGSTOP) syscall(SYS_rt_sigaction, signal, fallback, NULL, 8);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    /* Before anything else it does: whatever it starts is in the cgroup. */
    if (request->cgroup_procs >= 0 && write(request->cgroup_procs, "0", 1) < 0) report_and_exit(shared, errno);
    /* A table of its own, copied from the descriptors below the slots' top
       only (Linux 5.9+). Nothing above touches the shared table; an older
       kernel copies all of it, as a plain clone would have. */
    if (shared->unshare_below > 0
        && syscall(SYS_close_range, shared->unshare_below, ~0U, CLOSE_RANGE_UNSHARE_FLAG) < 0
        && unshare(CLONE_FILES) < 0) {
        shared->could_not_unshare = 1;
        report_and_exit(shared, errno);
    }
    if (request->new_session && setsid() < 0) report_and_exit(shared, errno);
    if (request->parent_death_signal > 0) {
        if (prctl(PR_SET_PDEATHSIG, (unsigned long)request->parent_death_signal, 0UL, 0UL, 0UL) < 0) {
            report_and_exit(shared, errno);
        }
        /* The parent may have died before the line above took effect. (In
           a PID namespace of its own the parent is out of sight: its link
           ends it, or the group reaper.) */
        if (!request->world && getppid() != parent) report_and_exit(shared, ESRCH);
    }
    /* stdio: first every source above 2 (a source may itself be 0, 1 or 2,
       or another's target), then into place; dup2 clears close-on-exec. */
    /* The passed descriptor first, above 3: a stdio copy may land on 3,
       and dup2 onto a descriptor it already is would keep close-on-exec. */
    int passed = -1;
    if (request->passed_descriptor > 2) {
        passed = fcntl(request->passed_descriptor, F_DUPFD_CLOEXEC, 4);
        if (passed < 0) report_and_exit(shared, errno);
    }
    int sources[3];
    for (int fd = 0; fd < 3; fd++) {
        int source = request->stdio[fd];
        if (source < 0) source = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (source < 0) report_and_exit(shared, errno);
        sources[fd] = fcntl(source, F_DUPFD_CLOEXEC, 3);
        if (sources[fd] < 0) report_and_exit(shared, errno);
    }
    for (int fd = 0; fd < 3; fd++) {
        if (dup2(sources[fd], fd) < 0) report_and_exit(shared, errno);
    }
    if (passed >= 0 && dup2(passed, 3) < 0) report_and_exit(shared, errno);

    /* Its world before its directory, which is a path in it, and before
       the descriptor limit: the opens it makes may be numbered past it
       where the child still holds the parent's whole table. */
    if (request->world && tether_enter_world(request->world, request->confinement.landlock_ruleset) < 0) {
        report_and_exit(shared, request->world->error);
    }

    /* After stdio: the parent's descriptors may reach past the new limit,
       and the copies above were made at the lowest free number. */
    if (request->descriptor_soft_limit > 0) {
        struct rlimit limit;
        if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
            rlim_t wanted = (rlim_t)request->descriptor_soft_limit;
            limit.rlim_cur = wanted < limit.rlim_max ? wanted : limit.rlim_max;
            /* A confined child may not raise it: each descriptor can hold
               a socket's buffers, which no memory limit but a cgroup's counts. */
            if (request->confinement.no_new_privileges) limit.rlim_max = limit.rlim_cur;
            setrlimit(RLIMIT_NOFILE, &limit);
        }
    }

    if (request->working_directory && chdir(request->working_directory) < 0) report_and_exit(shared, errno);

    /* Confinement last: nothing above needs rights it takes away. In a
       world, never without dropping every capability: its old root lies
       beneath its new one (see ExtensionWorld.c). */
    struct tether_confinement confinement = request->confinement;
    if (request->world) confinement.no_new_privileges = 1;
    int confined = tether_apply_confinement(&confinement, 0);
    if (confined < 0) report_and_exit(shared, -confined);
    /* A child keeps no descriptor but its stdio (and the passed one). Ours are close-on-exec,
       but not every one in the process is: libcurl's own socket pairs (its
       wake-up pair, its resolver's) are not, nor what the host inherited
       from whatever started it; to a confined child such a descriptor is
       an open door past the rules, which check only what is opened anew.
       The table holds only the parent's lowest few (see the slots) unless
       the kernel could not copy part of it. Marked close-on-exec rather
       than closed here (Linux 5.11+): exec closes them after it lets the
       parent go on. Linux 5.9 and 5.10 close them here; an older kernel
       leaves close-on-exec to do it. */
    if (!request->keep_inherited) {
        unsigned first = passed >= 0 ? 4U : 3U;
        if (syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC_FLAG) < 0) syscall(SYS_close_range, first, ~0U, 0U);
    }

    char *const *envp = request->envp ? request->envp : environ;
    /* An executable just written can be briefly "busy" (ETXTBSY): a process
       that forked while the writer's descriptor was open holds a copy until
       it execs, which takes microseconds. A bounded backoff (at most 20 × 1
       ms), not a wait on state. */
    for (int attempt = 0; attempt < 20; attempt++) {
        execve(request->path, request->argv, envp);
        if (errno != ETXTBSY) break;
        struct timespec pause = {0, 1000000L};
        nanosleep(&pause, NULL);
    }
    report_and_exit(shared, errno);
}

int tether_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

/* Low descriptor numbers kept for the spawn: what a child keeps is first
   put there, so that the child need copy only the table below them. A host
   of a thousand extensions holds five thousand descriptors; a child that
   copied them all and closed them at exec paid about 1.5 ms a launch for
   it (the inodes' cache misses), more than its share at a few. Between
   spawns each slot holds /dev/null, so no other open takes its number. */
enum { SLOT_STDIN, SLOT_STDOUT, SLOT_STDERR, SLOT_PASSED, SLOT_RULESET, SLOT_COUNT };
static int slots[SLOT_COUNT];
static int slot_null = -1;
static unsigned slots_top;   /* 0: no slots (a descriptor was short at the first try) */
static int slots_refused;    /* refused by an outer filter: spawn as before (atomic) */
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static void reserve_slots(void) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) return;
    unsigned top = (unsigned)null + 1;
    for (int slot = 0; slot < SLOT_COUNT; slot++) {
        /* Never 0, 1 or 2: a slot holds a child's pipe for a moment, and a
           process started with its stdio closed would write there. Nor 3:
           the child puts its passed descriptor there before it confines
           itself with the ruleset's slot. */
        slots[slot] = fcntl(null, F_DUPFD_CLOEXEC, 4);
        if (slots[slot] < 0) {
            while (slot-- > 0) close(slots[slot]);
            close(null);
            return;
        }
        if ((unsigned)slots[slot] + 1 > top) top = (unsigned)slots[slot] + 1;
    }
    slot_null = null;
    /* A whole number of bitmap words (64 descriptors): before Linux 5.18
       (and its stable backports) the copy of a table cut elsewhere left
       the last few descriptors copied but not marked open, and the next
       open in the child could land on one (a kernel BUG). */
    slots_top = (top + 63) & ~63U;
}

void tether_spawn_reserve_descriptors(void) {
    pthread_once(&slots_once, reserve_slots);
}

/* Puts `descriptor` (>= 0) in its slot for the child; the number it has there. */
static int into_slot(int slot, int descriptor, int *used) {
    if (descriptor < 0) return descriptor;
    if (dup3(descriptor, slots[slot], O_CLOEXEC) < 0) return -1;
    *used |= 1 << slot;
    return slots[slot];
}

static int clone_child(struct child_arguments *shared, int flags) {
    /* vfork's speed without sharing the caller's stack: the host's page
       tables are not copied (a fork of it costs about 0.3 ms). */
    const size_t stack_size = 64 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return -errno;
    /* No signal handler may run in the child before it resets them. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    struct tether_world *world = shared->request->world;
    if (world) flags |= tether_world_clone_flags(world);
    /* Returns once the child has exec'd or exited. */
    pid_t pid = clone(run_child, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD | flags, shared);
    int clone_error = errno;
    if (pid < 0 && world) {
        world->error = clone_error;
        world->failed_step = TETHER_WORLD_STEP_CLONE;
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    munmap(stack, stack_size);
    return pid < 0 ? -clone_error : pid;
}

/* The spawn through the slots (slots_lock held): the pid, or -errno. */
static pid_t clone_sharing(struct child_arguments *shared) {
    const struct tether_spawn_request *request = shared->request;
    struct tether_spawn_request placed = *request;
    int used = 0;
    int ok = 1;
    for (int fd = 0; fd < 3 && ok; fd++) {
        placed.stdio[fd] = into_slot(SLOT_STDIN + fd, request->stdio[fd], &used);
        ok = request->stdio[fd] < 0 || placed.stdio[fd] >= 0;
    }
    if (ok && request->passed_descriptor > 2) {
        placed.passed_descriptor = into_slot(SLOT_PASSED, request->passed_descriptor, &used);
        ok = placed.passed_descriptor >= 0;
    }
    if (ok && request->confinement.landlock_ruleset >= 0) {
        placed.confinement.landlock_ruleset = into_slot(SLOT_RULESET, request->confinement.landlock_ruleset, &used);
        ok = placed.confinement.landlock_ruleset >= 0;
    }
    pid_t pid = -errno;
    if (ok) {
        shared->request = &placed;
        shared->unshare_below = slots_top;
        pid = clone_child(shared, CLONE_FILES);
        shared->request = request;
        shared->unshare_below = 0;
    }
    /* The slots let go of the child's descriptors (a pipe's writing end
       held here would keep its reader from ever seeing the end). */
    for (int slot = 0; slot < SLOT_COUNT; slot++) {
        if (used & (1 << slot)) dup3(slot_null, slots[slot], O_CLOEXEC);
    }
    /* Refused, by the clone or the child's unshare (an outer seccomp
       filter): spawn as before, now and from now on. Another error (no
       memory in the child's cgroup) is the spawn's. */
    int error = !ok ? 0 : pid < 0 ? -pid : shared->could_not_unshare ? shared->error : 0;
    /* Its namespaces refused: the world's failure, not the slots'. */
    if (request->world && request->world->error) error = 0;
    if (error == EPERM || error == EACCES || error == ENOSYS || (pid < 0 && error == EINVAL)) {
        if (pid > 0) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        }
        __atomic_store_n(&slots_refused, 1, __ATOMIC_RELAXED);
        shared->error = 0;
        pid = clone_child(shared, 0);
    }
    return pid;
}

int tether_spawn(const struct tether_spawn_request *request, int *pid_out, int *pidfd_out) {
    struct child_arguments shared = {request, getpid(), 0, 0, 0};
    pid_t pid;
    /* A child that keeps what it inherits needs the whole table anyway. */
    if (!request->keep_inherited) tether_spawn_reserve_descriptors();
    if (!request->keep_inherited && slots_top > 0 && !__atomic_load_n(&slots_refused, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&slots_lock);
        pid = clone_sharing(&shared);
        pthread_mutex_unlock(&slots_lock);
    } else {
        pid = clone_child(&shared, 0);
    }
    if (pid < 0) return pid;
    int error = shared.error;
    int pidfd = -1;
    if (error == 0 && !request->without_pidfd) {
        /* The child is ours to reap, so its pid cannot be reused before we
           wait for it, even if it has already ended. */
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
            /* Without a pidfd (Linux < 5.3) nobody could learn of its exit. */
            error = errno;
            kill(pid, SIGKILL);
        }
    }
    if (error != 0) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        return -error;
    }
    *pid_out = pid;
    *pidfd_out = pidfd;
    return 0;
}

#else
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int tether_pipe(int fds[2]) {
    if (pipe(fds) < 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

int tether_spawn(const struct tether_spawn_request *request, int *pid_out, int *pidfd_out) {
    (void)request;
    (void)pid_out;
    (void)pidfd_out;
    return -ENOSYS;
}
#endif
