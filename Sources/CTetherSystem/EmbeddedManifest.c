#include "CTetherSystem.h"

#include <stddef.h>

/* Defined by the build plugin's generated Swift (@_cdecl) in the
   extension's own target, or not at all: a weak reference resolves to
   NULL then. Resolved when the executable is linked, so it needs no
   dynamic symbol table. */
extern const unsigned char *tether_embedded_manifest(long *length) __attribute__((weak));

const unsigned char *tether_find_embedded_manifest(long *length) {
    *length = 0;
    return tether_embedded_manifest != NULL ? tether_embedded_manifest(length) : NULL;
}
