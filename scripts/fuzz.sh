#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes the parsers that take outside input with libFuzzer: AT response lines, trace CSV, SMS PDUs, the
# configuration YAML and the page's HTTP requests. Each target runs RUNS inputs (default 1 million) from our seeds; a broken
# property or a trap stops it with the input saved under .build/fuzz/crashes/. Each ends with one
# line: inputs, broken, how many took over 100 ms, the slowest.
#   scripts/fuzz.sh [RUNS] [TARGET …]        targets: at trace config pdu http (default: all five)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000000}
shift || true
targets=("${@:-at trace config pdu http}")
read -r -a targets <<< "${targets[*]}"
scripts/install-deps.sh
# Swift's -sanitize=fuzzer instruments every Swift module and links libFuzzer (libyaml, Debian's,
# is not instrumented: the composer's Swift around it is). SwiftPM names the entry point after the
# module, which the harness defines when LIBFUZZER is set. GNU gold fails on libFuzzer's objects:
# the toolchain's own lld links.
swift build -c release --product rideguard-fuzz --build-path .build/fuzz \
    -Xswiftc -sanitize=fuzzer -Xswiftc -DLIBFUZZER -Xswiftc -use-ld=lld -Xcc -fsanitize=fuzzer-no-link
binary=.build/fuzz/release/rideguard-fuzz
mkdir -p .build/fuzz/crashes
for target in "${targets[@]}"; do
    corpus=.build/fuzz/corpus/$target
    rm -rf "$corpus" && mkdir -p "$corpus"
    start=$(date +%s)
    # Swift's own backtracer would take the trap before libFuzzer can save the input.
    SWIFT_BACKTRACE=enable=no RIDEGUARD_FUZZ_TARGET=$target RIDEGUARD_FUZZ_SEEDS=$corpus "$binary" -runs="$runs" -seed=1 -max_len=4096 \
        -timeout=10 -print_final_stats=1 -artifact_prefix=".build/fuzz/crashes/$target-" "$corpus" \
        2> ".build/fuzz/$target.log" | grep '^rideguard-fuzz' || { tail -30 ".build/fuzz/$target.log"; exit 1; }
    echo "  $(( $(date +%s) - start )) s; $(grep -E 'cov: ' ".build/fuzz/$target.log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9/a-zA-Z]+')"
done
