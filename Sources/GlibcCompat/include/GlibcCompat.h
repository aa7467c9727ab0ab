// SPDX-License-Identifier: Apache-2.0
// Nothing to import: see glibc-compat.c. (A C target needs a public header folder.)
#ifndef RIDEGUARD_GLIBC_COMPAT_H
#define RIDEGUARD_GLIBC_COMPAT_H
#endif
