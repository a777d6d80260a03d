#define _GNU_SOURCE
#include "CBenchSystem.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
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

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

int bench_syscalls_under_filter(const void *filter, unsigned short length, int samples, int calls,
                                double *ns_per_call) {
    size_t size = (size_t)samples * sizeof(double);
    /* Shared with the child, which alone takes the filter. */
    double *shared = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        if (filter) {
            struct sock_fprog program = {length, (struct sock_filter *)filter};
            if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) _exit(2);
            if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0U, &program) < 0) _exit(3);
        }
        for (int sample = 0; sample < samples; sample++) {
            struct timespec start, end;
            clock_gettime(CLOCK_MONOTONIC, &start);
            for (int call = 0; call < calls; call += 2) {
                syscall(SYS_getppid);
                syscall(SYS_fcntl, 0, F_GETFL);
            }
            clock_gettime(CLOCK_MONOTONIC, &end);
            double elapsed = (double)(end.tv_sec - start.tv_sec) * 1e9 + (double)(end.tv_nsec - start.tv_nsec);
            shared[sample] = elapsed / calls;
        }
        _exit(0);
    }
    int saved = errno;
    int status = 0;
    if (pid > 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    }
    memcpy(ns_per_call, shared, size);
    munmap(shared, size);
    if (pid < 0) {
        errno = saved;
        return -1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        errno = ECHILD;
        return -1;
    }
    return 0;
}
