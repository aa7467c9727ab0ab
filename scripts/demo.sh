#!/usr/bin/env bash
# The demo: builds RideGuard and replays a bundled crash trace through the detector.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product rideguard
.build/release/rideguard replay Tests/Fixtures/example-lowside.csv
