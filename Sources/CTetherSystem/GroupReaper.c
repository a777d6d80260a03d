#define _GNU_SOURCE
#include "CTetherSystem.h"

#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long monotonic_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000L + now.tv_nsec / 1000000L;
}

/* Every descriptor from `lowest` up: close_range where the kernel has it
   (5.9), else one by one up to the limit. */
static void close_from(int lowest) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lowest, ~0U, 0U) == 0) return;
#endif
    struct rlimit limit;
    long highest = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
        ? (long)limit.rlim_cur : 65536L;
    for (long fd = lowest; fd < highest; fd++) close((int)fd);
}

/* The groups the host has running, in memory from mmap (no malloc in a
   forked copy of a multithreaded process). */
static pid_t *groups = NULL;
static size_t group_count = 0, group_capacity = 0;

static void add_group(pid_t group) {
    if (group_count == group_capacity) {
        size_t capacity = group_capacity ? group_capacity * 2 : 1024;
        pid_t *grown = mmap(NULL, capacity * sizeof *grown, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        /* Out of memory: this group goes unguarded, the others stay. */
        if (grown == MAP_FAILED) return;
        for (size_t i = 0; i < group_count; i++) grown[i] = groups[i];
        if (groups) munmap(groups, group_capacity * sizeof *groups);
        groups = grown;
        group_capacity = capacity;
    }
    groups[group_count++] = group;
}

static void remove_group(pid_t group) {
    for (size_t i = 0; i < group_count; i++) {
        if (groups[i] == group) {
            groups[i] = groups[--group_count];
            return;
        }
    }
}

/* `ps` and `pgrep -f` would show the reaper, a fork of the host, as the host
   itself: its argv is the host's. It is rewritten in place, between the
   arg_start and arg_end addresses the kernel gives in /proc/self/stat
   (fields 48 and 49), as setproctitle does. */
static void rename_command_line(const char *name, size_t size) {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buffer[2048];
    ssize_t length = read(fd, buffer, sizeof buffer - 1);
    close(fd);
    if (length <= 0) return;
    buffer[length] = 0;
    /* Fields are counted after the command name, which may hold spaces. */
    char *cursor = strrchr(buffer, ')');
    if (cursor == NULL) return;
    unsigned long start = 0, end = 0;
    for (int field = 2; *cursor && field < 49; cursor++) {
        if (*cursor != ' ') continue;
        field++;
        if (field == 48 || field == 49) {
            unsigned long value = 0;
            for (char *digit = cursor + 1; *digit >= '0' && *digit <= '9'; digit++) {
                value = value * 10 + (unsigned long)(*digit - '0');
            }
            if (field == 48) start = value; else end = value;
        }
    }
    if (start == 0 || end <= start || end - start < size) return;
    memset((void *)start, 0, end - start);
    memcpy((void *)start, name, size);
}

/* Reads records until the host's end of the pipe closes, which happens
   when the host exits, however it exits; then ends every group still
   listed: SIGTERM, and SIGKILL after the grace. */
static void run_reaper(int records, int ready, int grace_ms) {
    setsid();
    /* Its life is the pipe's: `pkill tether` or a terminal's signals must
       not leave the extensions unguarded while the host lives. */
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
    }
    /* Holds nothing of the host's: above all not its lock descriptors,
       which would keep the host "running" to every probe. */
    /* The ready pipe out of the way first: placing records at 3 must not
       clobber it. */
    int ready_high = fcntl(ready, F_DUPFD, 5);
    if (records != 3) {
        if (dup2(records, 3) < 0) _exit(1);
        records = 3;
    }
    if (ready_high >= 0 && dup2(ready_high, 4) < 0) ready_high = -1;
    close_from(5);
    prctl(PR_SET_NAME, (unsigned long)"tether-reaper", 0UL, 0UL, 0UL);
    rename_command_line("tether-reaper", sizeof "tether-reaper");
    /* Ready, under its name and holding nothing of the host's: the host's
       start returns only now, so whoever sees the host ready sees this. */
    /* The ready pipe stays open: its end of file tells the host that the
       reaper has exited. */
    if (ready_high >= 0) {
        ssize_t written;
        do { written = write(4, "r", 1); } while (written < 0 && errno == EINTR);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);

    int32_t record;
    for (;;) {
        ssize_t got = read(records, &record, sizeof record);
        if (got < 0 && errno == EINTR) continue;
        if (got != (ssize_t)sizeof record) break;  /* end of file: the host is gone */
        if (record > 0) add_group(record);
        else if (record < 0) remove_group(-record);
    }
    int signalled = 0;
    for (size_t i = 0; i < group_count; i++) {
        if (kill(-groups[i], SIGTERM) == 0) signalled = 1;
    }
    if (!signalled) _exit(0);
    /* Until every group is gone (checked every 20 ms: this runs once, at the
       host's death), or the grace is over. */
    long deadline = monotonic_ms() + grace_ms;
    for (;;) {
        int alive = 0;
        for (size_t i = 0; i < group_count; i++) {
            if (kill(-groups[i], 0) == 0) alive = 1;
        }
        if (!alive) _exit(0);
        long left = deadline - monotonic_ms();
        if (left <= 0) break;
        poll(NULL, 0, left < 20 ? (int)left : 20);
    }
    for (size_t i = 0; i < group_count; i++) kill(-groups[i], SIGKILL);
    _exit(0);
}

int tether_start_group_reaper(int grace_ms, int *lifeline) {
    *lifeline = -1;
    int records[2];
    if (pipe2(records, O_CLOEXEC) < 0) return -1;
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0) {
        int saved = errno;
        close(records[0]);
        close(records[1]);
        errno = saved;
        return -1;
    }
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    /* Orphaned at once (double fork): it is nobody's child to reap, and a
       shell's `wait` in the host's place would not wait for it. */
    pid_t first = fork();
    if (first == 0) {
        close(records[1]);
        close(ready[0]);
        pid_t second = fork();
        if (second == 0) run_reaper(records[0], ready[1], grace_ms);
        _exit(second < 0 ? 1 : 0);
    }
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(records[0]);
    close(ready[1]);
    if (first < 0) {
        close(records[1]);
        close(ready[0]);
        errno = saved;
        return -1;
    }
    int status = 0;
    while (waitpid(first, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        close(records[1]);
        close(ready[0]);
        errno = EAGAIN;
        return -1;
    }
    /* Its byte (or its end, if it died): a few hundred microseconds. Bounded
       all the same: the host's start never hangs on it. */
    struct pollfd waiting = {ready[0], POLLIN, 0};
    while (poll(&waiting, 1, 2000) < 0 && errno == EINTR) {}
    char byte;
    while (read(ready[0], &byte, 1) < 0 && errno == EINTR) {}
    *lifeline = ready[0];
    /* A stopped reaper must never block the host: records beyond a full
       pipe are dropped. */
    int flags = fcntl(records[1], F_GETFL);
    if (flags >= 0) fcntl(records[1], F_SETFL, flags | O_NONBLOCK);
    return records[1];
}

#else
#include <errno.h>

int tether_start_group_reaper(int grace_ms, int *lifeline) {
    (void)grace_ms;
    *lifeline = -1;
    errno = ENOSYS;
    return -1;
}
#endif
