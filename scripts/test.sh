#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test suite: installs what the tests need, builds and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
swift build --build-tests
# One test at a time: many tests run real peers (gpsd, a fake modem, a fake iiod, the agent) and wait
# for them, and on a 2-core machine parallel tests starved the async work (AT timeouts) they check.
swift test --skip-build --no-parallel
