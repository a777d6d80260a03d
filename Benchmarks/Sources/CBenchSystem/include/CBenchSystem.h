#ifndef CBENCH_SYSTEM_H
#define CBENCH_SYSTEM_H

#include <sys/resource.h>

/// sched_setaffinity(pid, {cpu}) and sched_getcpu(): the CPU_SET macros and
/// GNU functions do not reach Swift.
int bench_pin_to_cpu(int pid, int cpu);
int bench_current_cpu(void);

/// Runs `path` (argv, envp) with stdio on /dev/null and waits for it.
/// `use_fork` 1 makes the child with fork(2): its peak RSS is then its own
/// (a vfork child shares the parent's memory, and exec carries the parent's
/// high-water mark into the child's); 0 uses vfork, the cheaper spawn that
/// posix_spawn does. Fills the wall time from before the fork to after the
/// wait, the wait status, and the child's rusage. 0, or -1 and errno.
int bench_run_measured(const char *path, char *const argv[], char *const envp[], int use_fork,
                       long long *wall_ns, int *status, struct rusage *usage);

/// In a forked child: `filter` (classic BPF, `length` instructions;
/// none if NULL) after PR_SET_NO_NEW_PRIVS, then `samples` rounds of
/// `calls` system calls each: getppid and fcntl(F_GETFL), the second
/// allowed by its argument. Fills `ns_per_call` with each round's
/// nanoseconds per call. 0, or -1 and errno.
int bench_syscalls_under_filter(const void *filter, unsigned short length, int samples, int calls,
                                double *ns_per_call);

#endif
