#include "CTetherSystem.h"

#ifdef __linux__
#include <sys/prctl.h>

int tether_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}
#else
int tether_set_parent_death_signal(int signal) {
    (void)signal;
    return 0;
}
#endif
