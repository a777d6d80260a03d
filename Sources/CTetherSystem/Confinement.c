#define _GNU_SOURCE
#include "CTetherSystem.h"
#include "Confinement.h"

#ifdef __linux__
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

int tether_apply_confinement(int no_new_privileges, int ruleset, const void *filter, unsigned short length,
                             int all_threads) {
    /* Required for both below without CAP_SYS_ADMIN, and what keeps a
       setuid program from running with more rights than its caller. */
    if ((no_new_privileges || ruleset >= 0 || filter) && prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) {
        return -errno;
    }
    if (ruleset >= 0 && syscall(SYS_landlock_restrict_self, ruleset, 0U) < 0) return -errno;
    if (filter) {
        struct sock_fprog program = {length, (struct sock_filter *)filter};
        unsigned int flags = all_threads ? SECCOMP_FILTER_FLAG_TSYNC : 0;
        long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program);
        /* With TSYNC, a positive result is the id of a thread that could
           not take the filter (errno untouched): nothing was installed. */
        if (rc < 0) return -errno;
        if (rc > 0) return -ESRCH;
    }
    return 0;
}

int tether_confine_self(int ruleset, const void *seccomp_filter, unsigned short seccomp_filter_length) {
    return tether_apply_confinement(1, ruleset, seccomp_filter, seccomp_filter_length, 1);
}

int tether_seccomp_available(void) {
    /* 0 (filters supported, none of ours yet) or 2 (filtered); EINVAL
       without seccomp in the kernel. */
    return prctl(PR_GET_SECCOMP, 0UL, 0UL, 0UL, 0UL) >= 0;
}

#else
#include <errno.h>

int tether_apply_confinement(int no_new_privileges, int ruleset, const void *filter, unsigned short length,
                             int all_threads) {
    (void)no_new_privileges; (void)ruleset; (void)filter; (void)length; (void)all_threads;
    return -ENOSYS;
}

int tether_confine_self(int ruleset, const void *seccomp_filter, unsigned short seccomp_filter_length) {
    (void)ruleset; (void)seccomp_filter; (void)seccomp_filter_length;
    return -ENOSYS;
}

int tether_seccomp_available(void) { return 0; }
#endif
