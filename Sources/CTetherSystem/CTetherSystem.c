#define _GNU_SOURCE
#include "CTetherSystem.h"

#ifdef __linux__
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>

int tether_pin_to_cpu(int pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(pid, sizeof set, &set);
}

int tether_current_cpu(void) {
    return sched_getcpu();
}

int tether_release_free_memory(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}

int tether_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
int tether_run_measured(const char *path, char *const argv[], char *const envp[], int use_fork,
                        long long *wall_ns, int *status, struct rusage *usage) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0) return -1;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pid_t pid = use_fork ? fork() : vfork();
    if (pid == 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        execve(path, argv, envp);
        _exit(127);
    }
    int saved = errno;
    close(null);
    if (pid < 0) {
        errno = saved;
        return -1;
    }
    while (wait4(pid, status, 0, usage) < 0) {
        if (errno != EINTR) return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    *wall_ns = (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec);
    return 0;
}

#else
#include <errno.h>

int tether_release_free_memory(void) {
    return 0;
}

int tether_pidfd_open(int pid) {
    (void)pid;
    errno = ENOSYS;
    return -1;
}

int tether_pin_to_cpu(int pid, int cpu) {
    (void)pid;
    (void)cpu;
    errno = ENOSYS;
    return -1;
}

int tether_current_cpu(void) {
    return -1;
}
#endif
