#define _GNU_SOURCE
#include "CTetherSystem.h"

#ifdef __linux__
#include <malloc.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

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
#else
#include <errno.h>

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
