#define _GNU_SOURCE
#include "CTetherSystem.h"

#ifdef __linux__
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/openat2.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>

int tether_release_free_memory(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}

int tether_renameat2(int from_directory, const char *from, int to_directory, const char *to, unsigned flags) {
#ifdef SYS_renameat2
    return (int)syscall(SYS_renameat2, from_directory, from, to_directory, to, flags);
#else
    (void)from_directory; (void)from; (void)to_directory; (void)to; (void)flags;
    errno = ENOSYS;
    return -1;
#endif
}

int tether_become_subreaper(void) {
    return prctl(PR_SET_CHILD_SUBREAPER, 1UL, 0UL, 0UL, 0UL);
}

int tether_open_directory_beneath(int root, const char *path) {
#ifdef SYS_openat2
    struct open_how how = {
        .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, root, path, &how, sizeof how);
#else
    (void)root; (void)path;
    errno = ENOSYS;
    return -1;
#endif
}

int tether_reap_group(int group) {
    int reaped = 0;
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PGID, (id_t)group, &info, WEXITED | WNOHANG) != 0) {
            if (errno == EINTR) continue;
            return reaped;  /* ECHILD: none of ours in that group */
        }
        if (info.si_pid == 0) return reaped;  /* some alive, none exited */
        reaped++;
    }
}

int tether_ended_child(void) {
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0) return info.si_pid;
        if (errno != EINTR) return -1;
    }
}

int tether_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
#else
#include <errno.h>

int tether_release_free_memory(void) {
    return 0;
}

int tether_renameat2(int from_directory, const char *from, int to_directory, const char *to, unsigned flags) {
    (void)from_directory; (void)from; (void)to_directory; (void)to; (void)flags;
    errno = ENOSYS;
    return -1;
}

int tether_become_subreaper(void) {
    errno = ENOSYS;
    return -1;
}

int tether_open_directory_beneath(int root, const char *path) {
    (void)root; (void)path;
    errno = ENOSYS;
    return -1;
}

int tether_reap_group(int group) {
    (void)group;
    return 0;
}

int tether_ended_child(void) {
    return -1;
}

int tether_pidfd_open(int pid) {
    (void)pid;
    errno = ENOSYS;
    return -1;
}
#endif
