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

static long monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000L + now.tv_nsec / 1000000L;
}

/* The reaper: orphaned at once (double fork), so the extension never sees it
   as a child of its own (a shell's `wait` would wait for it). It holds
   nothing of the extension's: stdio on /dev/null, every other descriptor
   closed but two pidfds. Only async-signal-safe calls: it runs in a forked
   copy of a multithreaded process. */
static void run_reaper(int host, int extension, int grace_ms) {
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    for (int fd = 3; fd < 1024; fd++) {
        if (fd != host && fd != extension) close(fd);
    }
    prctl(PR_SET_NAME, (unsigned long)"tether-reaper", 0UL, 0UL, 0UL);
    struct pollfd fds[2] = {{host, POLLIN, 0}, {extension, POLLIN, 0}};
    for (;;) {
        int ready = poll(fds, 2, -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) _exit(1);
        /* The host first: its death also ends the extension (PDEATHSIG), so
           both may be ready at once, and then the group is ours to end. */
        if (fds[0].revents) break;
        /* The extension ended while its host lives: the host ends the group. */
        if (fds[1].revents) _exit(0);
    }
    /* The host is gone: SIGTERM to the whole group, SIGKILL after the grace
       (that one ends the reaper too). */
    signal(SIGTERM, SIG_IGN);
    kill(0, SIGTERM);
    long deadline = monotonic_ms() + grace_ms;
    for (long left = grace_ms; left > 0; left = deadline - monotonic_ms()) {
        poll(NULL, 0, (int)left);
    }
    kill(0, SIGKILL);
    _exit(0);
}

int tether_start_group_reaper(int host_pid, int grace_ms) {
    int host = (int)syscall(SYS_pidfd_open, host_pid, 0);
    if (host < 0) return -1;
    int extension = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (extension < 0) {
        close(host);
        return -1;
    }
    pid_t first = fork();
    if (first == 0) {
        pid_t second = fork();
        if (second == 0) run_reaper(host, extension, grace_ms);
        _exit(second < 0 ? 1 : 0);
    }
    int status = 0;
    if (first > 0) {
        while (waitpid(first, &status, 0) < 0 && errno == EINTR) {}
    }
    close(host);
    close(extension);
    return first > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int tether_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

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

int tether_start_group_reaper(int host_pid, int grace_ms) {
    (void)host_pid;
    (void)grace_ms;
    errno = ENOSYS;
    return -1;
}

int tether_release_free_memory(void) {
    return 0;
}

int tether_set_parent_death_signal(int signal) {
    (void)signal;
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
