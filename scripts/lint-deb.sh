#!/usr/bin/env bash
# Debian's own checker on each package built: no error and no warning may be left (lintian's
# informational tags, such as its spelling guesses at the Swift runtime's strings, are not judged). An override, were one needed, would go in the package
# (/usr/share/lintian/overrides/rideguard) with its reason.
#   scripts/lint-deb.sh DEB…
# An arm64 package's binaries must load on a 16 KiB-page kernel (a Pi 5's kernel_2712.img) with all
# their hardening: every PT_LOAD aligned to at least 16 KiB, and GNU_RELRO ending on a 16 KiB boundary
# (else glibc leaves the end of the relocation-read-only data writable on such a kernel).
set -euo pipefail
bash "$(dirname "$0")/install-deps.sh" lintian binutils
page=16384

# Prints what is wrong with BINARY's program headers for 16 KiB pages; nothing when it loads whole.
sixteen_k_problems() {
    local type offset address physical size memory rest align
    readelf -lW "$1" | while read -r type offset address physical size memory rest; do
        align=${rest##* }
        case "$type" in
            LOAD) [ $((align)) -ge $page ] || echo "a LOAD segment at $address is aligned to $align, under 16 KiB" ;;
            GNU_RELRO) [ $(( (address + memory) % page )) -eq 0 ] ||
                printf 'GNU_RELRO ends at 0x%x, not on a 16 KiB boundary\n' $((address + memory)) ;;
        esac
    done
}

status=0
for deb in "$@"; do
    echo "lint-deb: $deb"
    if ! lintian --fail-on error,warning --no-tag-display-limit "$deb" 2>/dev/null | sed 's/^/  /'; then
        echo "lint-deb: $deb has lintian errors or warnings (the E: and W: lines above)" >&2
        status=1
    fi
    [ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || continue
    unpacked=$(mktemp -d)
    dpkg-deb -x "$deb" "$unpacked"
    for binary in "$unpacked"/usr/bin/*; do
        problems=$(sixteen_k_problems "$binary")
        if [ -n "$problems" ]; then
            echo "lint-deb: $(basename "$binary") in $deb would lose hardening on a 16 KiB-page kernel:" >&2
            echo "$problems" | sed 's/^/  /' >&2
            status=1
        else
            echo "  $(basename "$binary"): every LOAD aligned to 16 KiB or more, GNU_RELRO ends on a 16 KiB boundary"
        fi
    done
    rm -rf "$unpacked"
done
exit $status
