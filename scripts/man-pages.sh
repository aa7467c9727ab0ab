#!/usr/bin/env bash
# The manual pages, generated from the commands themselves so that they cannot go stale:
# rideguard(1) and a page per subcommand (rideguard.run(1), rideguard.config.check(1)…) and
# rideguard-web(1) by swift-argument-parser's generate-manual (from each binary's
# --experimental-dump-help), and rideguard.yaml(5) from `rideguard config example`. Dated by the
# newest entry of scripts/deb/changelog, so that a build is reproducible. Gzipped, as Debian
# installs them.
#   scripts/man-pages.sh BINARY WEB_BINARY OUT_DIR [RUN]
# RUN runs a binary of another architecture (an emulator, as the Makefile's RUN). The generator is
# built for this machine with its own Swift.
set -euo pipefail
binary=$1 web=$2 out=$3 run=${4:-}
cd "$(dirname "$0")/.."
version=$(sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/RideGuardCommands/RideGuard.swift)
date=$(date -u -d "$(sed -n 's/^ -- .*>  \(.*\)$/\1/p' scripts/deb/changelog | head -1)" +%F)

# The generator: asking the plugin for its help builds it (and not RideGuard) with this machine's Swift.
swift package plugin generate-manual --help > /dev/null
tool=$(find .build -path '*/debug/generate-manual-tool' -type f -perm -u+x | head -1)
[ -n "$tool" ] || { echo "man-pages: swift-argument-parser's generate-manual-tool was not built" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# What the generator runs for each binary: the binary, through RUN where one is given.
for program in "$binary" "$web"; do
    wrapper=$work/$(basename "$program")
    printf '#!/bin/sh\nexec %s %q "$@"\n' "$run" "$(readlink -f "$program")" > "$wrapper"
    chmod +x "$wrapper"
done
mkdir -p "$work/man1" "$out/man1" "$out/man5"
"$tool" "$work/$(basename "$binary")" --multi-page --date "$date" --authors "RideGuard developers<rideguard@users.noreply.github.com>" -o "$work/man1"
"$tool" "$work/$(basename "$web")" --date "$date" --authors "RideGuard developers<rideguard@users.noreply.github.com>" -o "$work/man1"
$run "$binary" config example | sh scripts/deb/config-manpage "$version" "$date" > "$work/rideguard.yaml.5"
# A subcommand's page is named by the generator, rideguard.run(1), rideguard.config.check(1): the
# git-style rideguard-web(1) would be both the `rideguard web` command and the rideguard-web binary.
# Its NAME says the page's name (whatis and apropos take one word), and the rest of the page the
# command as it is typed, `rideguard run`.
for page in "$work"/man1/*.1; do
    awk '/^\.Nm "/ && !named { named = $0; sub(/^\.Nm /, "", named); n = named; gsub(/"/, "", n); gsub(/ /, ".", n); print ".Nm " n; next }
         /^\.Nm$/ && named { print ".Nm " named; next }
         { print }' "$page" | gzip -9n > "$out/man1/$(basename "$page").gz"
done
gzip -9n < "$work/rideguard.yaml.5" > "$out/man5/rideguard.yaml.5.gz"
echo "man-pages: $(ls "$out/man1" | wc -l) in section 1, rideguard.yaml(5), dated $date"
