#!/usr/bin/env bash
# Debian's own checker on each package built: no error and no warning may be left (lintian's
# informational tags, such as its spelling guesses at the Swift runtime's strings, are not judged). An override, were one needed, would go in the package
# (/usr/share/lintian/overrides/rideguard) with its reason.
#   scripts/lint-deb.sh DEB…
set -euo pipefail
bash "$(dirname "$0")/install-deps.sh" lintian
status=0
for deb in "$@"; do
    echo "lint-deb: $deb"
    if ! lintian --fail-on error,warning --no-tag-display-limit "$deb" 2>/dev/null | sed 's/^/  /'; then
        echo "lint-deb: $deb has lintian errors or warnings (the E: and W: lines above)" >&2
        status=1
    fi
done
exit $status
