#ifndef TETHER_CSECCOMP_SHIM_H
#define TETHER_CSECCOMP_SHIM_H
#include <seccomp.h>
#include <sys/socket.h>
#endif
