#define _GNU_SOURCE
#include "CTetherSystem.h"

#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's Landlock interface (linux/landlock.h), spelled out: Debian
   12's headers stop at ABI 3, and the kernel may speak a newer one. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_TRUNCATE (1ULL << 14)    /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)   /* ABI 5 */
#define LL_NET_BIND_TCP (1ULL << 0)    /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

/* Every file access right `abi` knows: 13 in ABI 1, then REFER (2),
   TRUNCATE (3) and IOCTL_DEV (5). */
static uint64_t handled_fs(int abi) {
    uint64_t rights = (1ULL << 13) - 1;
    if (abi >= 2) rights |= 1ULL << 13;
    if (abi >= 3) rights |= LL_FS_TRUNCATE;
    if (abi >= 5) rights |= LL_FS_IOCTL_DEV;
    return rights;
}

/* The rights that apply to a file that is not a directory. */
static const uint64_t file_rights = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE
    | LL_FS_IOCTL_DEV;

int tether_landlock_abi(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi < 0 ? -errno : (int)abi;
}

int tether_landlock_ruleset(int abi, int deny_tcp, int scopes) {
    if (abi < 1) return -EINVAL;
    struct ll_ruleset_attr attributes = {handled_fs(abi), 0, 0};
    /* The kernel reads as much of the struct as the size says: older
       kernels refuse the fields they do not know. */
    size_t size = sizeof attributes.handled_access_fs;
    if (abi >= 4 && deny_tcp) {
        attributes.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
        size = 2 * sizeof(uint64_t);
    }
    if (abi >= 6 && scopes) {
        attributes.scoped = (uint64_t)scopes;
        size = sizeof attributes;
    }
    long fd = syscall(SYS_landlock_create_ruleset, &attributes, size, 0U);
    return fd < 0 ? -errno : (int)fd;
}

int tether_landlock_allow(int ruleset, int abi, const char *path, int access) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return -errno;
    int rc = tether_landlock_allow_descriptor(ruleset, abi, fd, access);
    close(fd);
    return rc;
}

int tether_landlock_allow_descriptor(int ruleset, int abi, int fd, int access) {
    struct stat status;
    if (fstat(fd, &status) < 0) return -errno;
    uint64_t rights = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
    /* Writing: everything but making sockets and devices (no role binds
       a socket where a client would look for the host's). */
    if (access == 1) rights = handled_fs(abi) & ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_SOCK | LL_FS_MAKE_BLOCK);
    /* Removing empty directories and nothing else: not even reading, since
       beside its own are other extensions' private directories. */
    if (access == 2) rights = LL_FS_REMOVE_DIR;
    /* Regular files in a directory: made, written, replaced, removed;
       no directories, links, FIFOs or devices. */
    if (access == 3) rights |= LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_MAKE_REG | LL_FS_REMOVE_FILE;
    /* Existing files written in place (lock files): nothing made or removed. */
    if (access == 4) rights |= LL_FS_WRITE_FILE;
    if (!S_ISDIR(status.st_mode)) rights &= file_rights;
    rights &= handled_fs(abi);
    struct ll_path_beneath_attr rule = {rights, fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0U);
    return rc < 0 ? -errno : 0;
}

int tether_landlock_allow_read(int ruleset, int abi, int fd, int directory) {
    uint64_t rights = LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR;
    if (!directory) rights &= file_rights;
    struct ll_path_beneath_attr rule = {rights & handled_fs(abi), fd};
    long rc = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &rule, 0U);
    return rc < 0 ? -errno : 0;
}

#else
#include <errno.h>

int tether_landlock_abi(void) { return -ENOSYS; }
int tether_landlock_ruleset(int abi, int deny_tcp, int scopes) { (void)abi; (void)deny_tcp; (void)scopes; return -ENOSYS; }
int tether_landlock_allow(int ruleset, int abi, const char *path, int access) {
    (void)ruleset; (void)abi; (void)path; (void)access;
    return -ENOSYS;
}
int tether_landlock_allow_descriptor(int ruleset, int abi, int fd, int access) {
    (void)ruleset; (void)abi; (void)fd; (void)access;
    return -ENOSYS;
}
int tether_landlock_allow_read(int ruleset, int abi, int fd, int directory) {
    (void)ruleset; (void)abi; (void)fd; (void)directory;
    return -ENOSYS;
}
#endif
