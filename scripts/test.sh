#!/usr/bin/env bash
# The test suite: installs what the tests need, builds and runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
swift build --build-tests
swift test --skip-build
