#include "CTetherSystem.h"

#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

int tether_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
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

int tether_set_parent_death_signal(int signal) {
    (void)signal;
    return 0;
}

int tether_pidfd_open(int pid) {
    (void)pid;
    errno = ENOSYS;
    return -1;
}
#endif
