#ifndef CTETHER_SYSTEM_H
#define CTETHER_SYSTEM_H

#include <sys/resource.h>
#ifdef __linux__
#include <sys/xattr.h> /* getxattr, for Swift: Glibc's module leaves it out */
#include <sys/vfs.h>   /* statfs, likewise */
#endif

/// pidfd_open(pid, 0): a descriptor that becomes readable when the process
/// ends (syscall is variadic too). -1 with errno set; ENOSYS off Linux.
int tether_pidfd_open(int pid);

/// Starts the host's group reaper: a small orphaned process, in a session
/// of its own, holding none of the host's descriptors, that reads 4-byte
/// records from a pipe (a process group id to guard, or its negation to let
/// go). When the host's end of the pipe closes (the host exited, even by
/// SIGKILL) it sends SIGTERM to every group still listed and SIGKILL after
/// `grace_ms`, so nothing an extension started outlives the host. Returns
/// once the reaper runs under its name holding nothing of the host's (so
/// whoever sees the host ready sees it), with the pipe's write end
/// (close-on-exec, non-blocking), or -1 with errno. `lifeline` is the read
/// end of a pipe the reaper holds open until it exits: end of file there
/// says it is gone.
int tether_start_group_reaper(int grace_ms, int *lifeline);

/// PR_SET_CHILD_SUBREAPER (prctl is variadic): what an extension leaves
/// behind when its main process dies is re-parented to the host, not to
/// init, so the host can wait for it and reap it. 0, or -1 with errno.
int tether_become_subreaper(void);

/// Reaps every exited child of ours in process group `group` (waitid with
/// P_PGID, WNOHANG): an extension's leftovers the host adopted. Only call
/// it once the group's leader, the extension's main process, is reaped.
/// The number reaped.
int tether_reap_group(int group);
/* The pid of a child that has ended and is not yet reaped (left so:
   WNOWAIT), 0 if none has ended, -1 if there is no child. */
int tether_ended_child(void);

/// pipe2(fds, O_CLOEXEC), which Glibc's Swift overlay leaves out (GNU).
int tether_pipe(int fds[2]);

/// renameat2(2), which Glibc's Swift overlay leaves out (GNU); ENOSYS where
/// the kernel headers lack it.
int tether_renameat2(int from_directory, const char *from, int to_directory, const char *to, unsigned flags);
/// RENAME_NOREPLACE: EEXIST instead of replacing an entry already there.
#define TETHER_RENAME_NOREPLACE 1u
/// RENAME_EXCHANGE: the two names swap inodes atomically.
#define TETHER_RENAME_EXCHANGE 2u

/// The directory at `path` (relative) beneath the open directory `root`,
/// no symbolic link followed in any of its components and nothing outside
/// `root` reached (openat2(2), RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
/// O_RDONLY | O_DIRECTORY | O_CLOEXEC. ENOSYS before Linux 5.6.
int tether_open_directory_beneath(int root, const char *path);

/// What `tether_spawn` runs and how.
/* What a confined process takes on, in this order: its limits, then (with
   no_new_privileges) no capabilities, PR_SET_NO_NEW_PRIVS, the Landlock
   ruleset and the seccomp filter. */
struct tether_confinement {
    long long data_limit;        /* 0, or RLIMIT_DATA (soft and hard), bytes */
    long long file_size_limit;   /* 0, or RLIMIT_FSIZE (soft and hard), bytes: SIGXFSZ past it */
    int no_new_privileges;       /* PR_SET_NO_NEW_PRIVS, no capabilities, RLIMIT_STACK at most 8 MiB (implied by the two below) */
    int landlock_ruleset;        /* -1, or a ruleset to enforce (landlock_restrict_self) */
    const void *seccomp_filter;  /* NULL, or classic BPF instructions (struct sock_filter) */
    unsigned short seccomp_filter_length; /* instructions */
};

/* An extension's own world (bubblewrap's model): new user, mount, PID,
   IPC and cgroup namespaces, a network namespace of its own when
   offline, and a root built from steps. Every `target` is an absolute
   path in the new root; a `source`, in the host's. */
enum tether_world_step_kind {
    TETHER_WORLD_READ = 0,      /* bind source at target, read-only */
    TETHER_WORLD_WRITE = 1,     /* bind source at target, writable */
    TETHER_WORLD_TMPFS = 2,     /* a tmpfs at target, mount options in data */
    TETHER_WORLD_SYMLINK = 3,   /* a symbolic link at target, its text source */
    TETHER_WORLD_DEVICE = 4,    /* bind the device file source at target */
    TETHER_WORLD_PROC = 5,      /* the PID namespace's /proc at target */
    TETHER_WORLD_DIRECTORY = 6, /* an empty directory at target */
    TETHER_WORLD_MASK = 7,      /* an empty read-only directory over target, hiding it */
};

struct tether_world_step {
    int kind;
    const char *source;
    const char *target;
    const char *data;
    int optional;               /* a missing source (or MASK target) skips the step */
    int landlock;               /* -1, or the Landlock access (tether_landlock_allow's) its target gets */
};

/* failed_step, when no step of the list failed. */
enum {
    TETHER_WORLD_STEP_CLONE = -1, /* the namespaces were refused */
    TETHER_WORLD_STEP_IDS = -2,   /* its uid/gid maps */
    TETHER_WORLD_STEP_ROOT = -3,  /* the tmpfs the root is built on */
    TETHER_WORLD_STEP_PIVOT = -4, /* the switch to the new root */
};

struct tether_world {
    int own_network;            /* nonzero: an empty network namespace */
    unsigned uid, gid;          /* each mapped to itself */
    const char *staging;        /* an existing directory to build on (hidden by a tmpfs, in its namespace only) */
    const struct tether_world_step *steps;
    int step_count;
    int landlock_abi;           /* for the rules its tmpfs and /proc get */
    /* Set by the child when it could not enter it: an errno, and the
       step (an index, or TETHER_WORLD_STEP_*). */
    int error;
    int failed_step;
};

/// The clone flags of `world`'s namespaces.
int tether_world_clone_flags(const struct tether_world *world);

/// Enters `world` in a child that exits at once (no exec): 0 if this
/// machine lets the host give extensions worlds of their own, else -errno
/// with world->error and world->failed_step set.
int tether_world_probe(struct tether_world *world);

struct tether_spawn_request {
    const char *path;            /* run as is: no PATH search */
    char *const *argv;
    char *const *envp;           /* NULL: this process's environment */
    const char *working_directory; /* NULL: this process's */
    int stdio[3];                /* descriptors that become 0, 1, 2; -1: /dev/null */
    int passed_descriptor;       /* above 2: becomes descriptor 3, kept across exec (a link, as systemd passes sockets); else none */
    int without_pidfd;           /* nonzero: no pidfd (the caller waits by pid, as for a foreground command; works before Linux 5.3); *pidfd is -1 */
    int keep_inherited;          /* nonzero: descriptors above 2 without close-on-exec stay open (a foreground command's, as a shell leaves them); else all are closed */
    int new_session;             /* setsid(): a session and process group of its own */
    int parent_death_signal;     /* 0, or PR_SET_PDEATHSIG with this signal (and a check that the parent lives) */
    long long descriptor_soft_limit; /* 0, or the child's soft RLIMIT_NOFILE (under the hard one) */
    int cgroup_procs;            /* -1, or a cgroup's cgroup.procs open for writing: the child joins it first */
    struct tether_confinement confinement; /* applied last before exec */
    struct tether_world *world;  /* NULL, or the world it runs in (entered after stdio, before
                                    the directory); where it cannot be entered, world->error says
                                    why and the spawn fails with it */
};

/// fork, then in the child only async-signal-safe steps (every signal to
/// its default and an empty mask, the cgroup, the session, the parent-death signal, the
/// descriptor limit, stdio, the directory) and execve. Returns 0 with the
/// pid and a pidfd (close-on-exec; readable once the child ends; the caller
/// reaps it with waitpid), or -errno: the fork's, or the child's if it
/// could not exec (it is reaped here). Needs Linux 5.3 (pidfd_open).
int tether_spawn(const struct tether_spawn_request *request, int *pid, int *pidfd);

/// Keeps five low descriptor numbers (on /dev/null) for `tether_spawn`, once
/// per process: a child that closes what it inherits then copies only the
/// table below them, however many the caller holds. The first spawn does
/// it; a process that will hold thousands calls it first, while its numbers
/// are low.
void tether_spawn_reserve_descriptors(void);

/// Landlock (Linux 5.13+), without root: the ABI version the kernel
/// speaks (1 to 7 as of Linux 6.15), or -errno (ENOSYS or EOPNOTSUPP when
/// the kernel lacks it or it is disabled).
int tether_landlock_abi(void);

/// A ruleset that handles every file access `abi` knows, TCP bind and
/// connect when `deny_tcp` (ABI 4+; no rule then allows any port), and the
/// scopes in `scopes` (ABI 6+: 1 abstract Unix sockets, 2 signals).
/// A close-on-exec descriptor, or -errno.
int tether_landlock_ruleset(int abi, int deny_tcp, int scopes);

/// Allows, beneath `path` (or on it, if it is not a directory), `access`:
/// 0 reading and executing; 1 every access the ruleset handles but making
/// sockets and devices; 2 removing
/// empty directories only (no reading); 3 reading, and making, writing and
/// removing regular files; 4 reading, and writing existing files. Follows symlinks in `path`, as the rule
/// applies to what it names. 0 or -errno.
int tether_landlock_allow(int ruleset, int abi, const char *path, int access);

/// The same for the file or directory `fd` is open on (O_PATH will do):
/// what was checked is what the rule covers, whatever the path names now.
int tether_landlock_allow_descriptor(int ruleset, int abi, int fd, int access);

/// Reading and executing on `fd`, whose kind the caller has checked
/// (`directory`: 1 for a directory): one system call, no fstat, for the
/// hundreds of entries a launch's read grants name.
int tether_landlock_allow_read(int ruleset, int abi, int fd, int directory);

/// For a process confining itself: `confinement` (no_new_privileges
/// implied); the capabilities and the ruleset (if >= 0) on the calling
/// thread (its later threads and children inherit them), the filter (if
/// any) on every thread. A refused limit never skips the rest. 0 or -errno.
int tether_confine_self(const struct tether_confinement *confinement);

/// 1 if the kernel takes seccomp filters (PR_GET_SECCOMP answers), else 0.
int tether_seccomp_available(void);

/// malloc_trim(0) where glibc has it: hand freed heap memory back to the
/// system (glibc otherwise keeps it for reuse). Returns 1 if any was released.
int tether_release_free_memory(void);

/// The manifest the TetherManifest build plugin embedded in this executable
/// (its generated `tether_embedded_manifest`, referenced weakly, so an
/// executable built without the plugin links and gets NULL): UTF-8 JSON,
/// `length` bytes, not NUL-terminated.
const unsigned char *tether_find_embedded_manifest(long *length);

#endif
