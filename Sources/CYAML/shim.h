// SPDX-License-Identifier: Apache-2.0
// libyaml 0.2 (Debian bookworm and trixie, Raspberry Pi OS): the configuration's YAML parser.
#ifndef RIDEGUARD_CYAML_SHIM_H
#define RIDEGUARD_CYAML_SHIM_H
#include <yaml.h>
#endif
