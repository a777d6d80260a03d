#ifndef CTETHER_EXTENSION_WORLD_H
#define CTETHER_EXTENSION_WORLD_H

#include "CTetherSystem.h"

/* In the spawn's child, just cloned into the namespaces of
   `tether_world_clone_flags`: maps its ids, builds its root from the
   steps, adds its new file systems to `ruleset` (if >= 0) and pivots into
   it. Raw system calls only. 0, or -errno with world->error and
   world->failed_step set. */
int tether_enter_world(struct tether_world *world, int ruleset);

#endif
