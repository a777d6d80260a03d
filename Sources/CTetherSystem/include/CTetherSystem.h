#ifndef CTETHER_SYSTEM_H
#define CTETHER_SYSTEM_H

#include <sys/resource.h>

/// prctl(PR_SET_PDEATHSIG, signal): ask the kernel to send `signal` to this
/// process when its parent dies. prctl is variadic, which Swift cannot call.
/// Returns 0, or -1 with errno set; 0 without effect off Linux.
int tether_set_parent_death_signal(int signal);

/// pidfd_open(pid, 0): a descriptor that becomes readable when the process
/// ends (syscall is variadic too). -1 with errno set; ENOSYS off Linux.
int tether_pidfd_open(int pid);

/// sched_setaffinity(pid, {cpu}) and sched_getcpu(), for benchmarks: the
/// CPU_SET macros and GNU functions do not reach Swift.
int tether_pin_to_cpu(int pid, int cpu);
int tether_current_cpu(void);

/// For an extension about to exec, in a process group of its own: starts a
/// small orphaned process in that group which waits on pidfds of the host
/// and of this process. If the host dies first (even by SIGKILL), it sends
/// SIGTERM to the whole group and SIGKILL after `grace_ms`, so nothing the
/// extension started outlives the host. 0, or -1 (no pidfds: Linux < 5.3).
int tether_start_group_reaper(int host_pid, int grace_ms);

/// malloc_trim(0) where glibc has it: hand freed heap memory back to the
/// system (glibc otherwise keeps it for reuse). Returns 1 if any was released.
int tether_release_free_memory(void);

/// For benchmarks: runs `path` (argv, envp) with stdio on /dev/null and waits
/// for it. `use_fork` 1 makes the child with fork(2): its peak RSS is then
/// its own (a vfork child shares the parent's memory, and exec carries the
/// parent's high-water mark into the child's); 0 uses vfork, the cheaper
/// spawn that posix_spawn does. Fills the wall time from before the fork to
/// after the wait, the wait status, and the child's rusage. 0, or -1 and errno.
int tether_run_measured(const char *path, char *const argv[], char *const envp[], int use_fork,
                        long long *wall_ns, int *status, struct rusage *usage);

#endif
