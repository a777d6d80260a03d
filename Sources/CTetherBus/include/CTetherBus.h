#ifndef CTETHER_BUS_H
#define CTETHER_BUS_H

#include <stddef.h>

/// D-Bus through GDBus (GIO), loaded at the first call (`dlopen`): the one
/// D-Bus client of the project (libsecret uses the same GIO). A process
/// that never calls it never maps GLib, and nothing links it. Calls block,
/// bounded by their timeout: call them where blocking is allowed.

/// The unit the service manager on the user's bus (`systemd --user`,
/// org.freedesktop.systemd1) runs `pid` in: its name, its control group
/// and whether it is delegated (`Delegate=`). 1 with those filled in; 0
/// when there is no such manager or it has no unit for `pid` (with why in
/// `error`); -1 on any other failure, with why.
int tether_bus_unit_of_pid(unsigned int pid, int timeout_milliseconds, char *unit, size_t unit_size,
                           char *control_group, size_t control_group_size, int *delegated,
                           char *error, size_t error_size);

#endif
