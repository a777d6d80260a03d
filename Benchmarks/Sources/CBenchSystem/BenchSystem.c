#define _GNU_SOURCE
#include "CBenchSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int bench_pin_to_cpu(int pid, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(pid, sizeof set, &set);
}

int bench_current_cpu(void) {
    return sched_getcpu();
}

int bench_run_measured(const char *path, char *const argv[], char *const envp[], int use_fork,
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
