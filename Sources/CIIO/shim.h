// SPDX-License-Identifier: Apache-2.0
// libiio 0.24..0.26: the same 0.x API. Nothing to hide yet; the header is the module's one include.
#ifndef RIDEGUARD_CIIO_SHIM_H
#define RIDEGUARD_CIIO_SHIM_H
#include <iio.h>
#endif
