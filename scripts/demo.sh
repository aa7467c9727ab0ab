#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The demo: builds RideGuard and runs the real agent on simulated hardware with a recorded crash:
# the ride, the detection, the countdown with the buzzer, the SMS the simulated modem sends, the
# follow-up. Under a minute. Add --cancel to say "I'm fine" during the countdown.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Built as `make` builds it (the Swift runtime inside), so `make` and `make deb` reuse this build.
swift build -c release --product rideguard --static-swift-stdlib
.build/release/rideguard demo "$@"
