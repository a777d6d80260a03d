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

#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/resource.h>
#include <sys/stat.h>

#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* Soft and hard, never above the hard limit we were given (ulimit,
   LimitDATA=): only a privileged process could raise it. */
static int limit(int resource, long long bytes) {
    struct rlimit current;
    if (getrlimit(resource, &current) < 0) return -errno;
    rlim_t wanted = (rlim_t)bytes;
    if (current.rlim_max != RLIM_INFINITY && wanted > current.rlim_max) wanted = current.rlim_max;
    struct rlimit next = {wanted, wanted};
    return setrlimit(resource, &next) < 0 ? -errno : 0;
}

/* No capability now or after exec: a root host's extension is root by uid
   alone (files it owns), never by privilege (no sethostname, no network
   configuration, no reading other processes). The bounding set and
   SECBIT_NOROOT need CAP_SETPCAP: a process without it has no capability
   to pass on (and no_new_privs keeps exec from granting any). */
static int drop_capabilities(void) {
    int droppable = prctl(PR_CAPBSET_READ, (unsigned long)CAP_SETPCAP, 0UL, 0UL, 0UL) == 1;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct held[2];
    if (syscall(SYS_capget, &header, held) < 0) return -errno;
    int privileged = (held[0].effective & (1U << CAP_SETPCAP)) != 0;
    if (privileged && droppable) {
        for (unsigned long cap = 0; cap < 64; cap++) {
            int in_set = prctl(PR_CAPBSET_READ, cap, 0UL, 0UL, 0UL);
            if (in_set < 0) break; /* past the kernel's last capability */
            if (in_set == 1 && prctl(PR_CAPBSET_DROP, cap, 0UL, 0UL, 0UL) < 0) return -errno;
        }
        unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
        if (prctl(PR_SET_SECUREBITS, bits, 0UL, 0UL, 0UL) < 0) return -errno;
    }
    if (!(privileged && droppable) && (getuid() == 0 || geteuid() == 0)) {
        /* Root that cannot empty its bounding set would get it back at exec. */
        for (unsigned long cap = 0; cap < 64; cap++) {
            int in_set = prctl(PR_CAPBSET_READ, cap, 0UL, 0UL, 0UL);
            if (in_set < 0) break;
            if (in_set == 1) return -EPERM;
        }
    }
    /* EINVAL before Linux 4.3, which has no ambient set. */
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) < 0 && errno != EINVAL) return -errno;
    struct __user_cap_data_struct none[2] = {{0, 0, 0}, {0, 0, 0}};
    if (syscall(SYS_capset, &header, none) < 0) return -errno;
    return 0;
}

int tether_apply_confinement(const struct tether_confinement *confinement, int all_threads) {
    /* The limits first, but a refused limit never skips the rest. */
    int limit_error = 0;
    if (confinement->data_limit > 0) limit_error = limit(RLIMIT_DATA, confinement->data_limit);
    if (confinement->file_size_limit > 0) {
        int rc = limit(RLIMIT_FSIZE, confinement->file_size_limit);
        if (limit_error == 0) limit_error = rc;
    }
    int ruleset = confinement->landlock_ruleset;
    const void *filter = confinement->seccomp_filter;
    if (confinement->no_new_privileges || ruleset >= 0 || filter) {
        /* The main thread's stack is not data: RLIMIT_DATA does not bound
           it, its own limit does (8 MiB unless someone raised it). */
        struct rlimit stack;
        const rlim_t stack_bytes = 8 * 1024 * 1024;
        if (getrlimit(RLIMIT_STACK, &stack) == 0 && (stack.rlim_cur == RLIM_INFINITY || stack.rlim_cur > stack_bytes)) {
            int rc = limit(RLIMIT_STACK, (long long)stack_bytes);
            if (limit_error == 0) limit_error = rc;
        }
        /* What it makes is its own alone: a mode is all a widget could
           otherwise change of the group's files' exposure. */
        umask(077);
        int dropped = drop_capabilities();
        if (dropped < 0) return dropped;
        /* Required for both below without CAP_SYS_ADMIN, and what keeps a
           setuid program from running with more rights than its caller. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1UL, 0UL, 0UL, 0UL) < 0) return -errno;
    }
    if (ruleset >= 0 && syscall(SYS_landlock_restrict_self, ruleset, 0U) < 0) return -errno;
    if (filter) {
        struct sock_fprog program = {confinement->seccomp_filter_length, (struct sock_filter *)filter};
        unsigned int flags = all_threads ? SECCOMP_FILTER_FLAG_TSYNC : 0;
        long rc = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &program);
        /* With TSYNC, a positive result is the id of a thread that could
           not take the filter (errno untouched): nothing was installed. */
        if (rc < 0) return -errno;
        if (rc > 0) return -ESRCH;
    }
    return limit_error;
}

int tether_confine_self(const struct tether_confinement *confinement) {
    struct tether_confinement self = *confinement;
    self.no_new_privileges = 1;
    return tether_apply_confinement(&self, 1);
}

int tether_seccomp_available(void) {
    /* 0 (filters supported, none of ours yet) or 2 (filtered); EINVAL
       without seccomp in the kernel. */
    return prctl(PR_GET_SECCOMP, 0UL, 0UL, 0UL, 0UL) >= 0;
}

#else
#include <errno.h>

int tether_apply_confinement(const struct tether_confinement *confinement, int all_threads) {
    (void)confinement; (void)all_threads;
    return -ENOSYS;
}

int tether_confine_self(const struct tether_confinement *confinement) {
    (void)confinement;
    return -ENOSYS;
}

int tether_seccomp_available(void) { return 0; }
#endif
