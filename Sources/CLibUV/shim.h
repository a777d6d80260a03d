#ifndef TETHER_CLIBUV_SHIM_H
#define TETHER_CLIBUV_SHIM_H
#include <uv.h>
#endif
