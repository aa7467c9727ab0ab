// SPDX-License-Identifier: Apache-2.0
// libmosquitto 2.0.11 (bookworm) and 2.0.21 (trixie): the MQTT client for fleets and groups.
#ifndef RIDEGUARD_CMOSQUITTO_SHIM_H
#define RIDEGUARD_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#endif
