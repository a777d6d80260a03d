#ifndef CTETHER_CONFINEMENT_H
#define CTETHER_CONFINEMENT_H

#include "CTetherSystem.h"

/* Shared by tether_spawn's child and tether_confine_self: raw system calls
   only, so it may run between clone and exec. `all_threads` syncs the
   seccomp filter to every thread (a process confining itself). 0 or -errno. */
int tether_apply_confinement(const struct tether_confinement *confinement, int all_threads);

#endif
