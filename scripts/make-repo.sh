#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A signed apt repository, made by reprepro, holding RideGuard's packages for Raspberry Pi OS (and
# Debian) trixie and bookworm, arm64 and amd64:
#   scripts/make-repo.sh --key FINGERPRINT --out DIR DEB...        (make repo KEY=… builds the four and calls it)
# Each package goes to the release its version names (+deb13: trixie, +deb12: bookworm); one already
# in DIR is replaced by a newer one, so publishing a release is: build, run this over the same DIR,
# copy DIR/public to the web host (DIR/conf and DIR/db are reprepro's own, kept for the next run). The Release files are signed (InRelease and Release.gpg) with the secret
# key FINGERPRINT from gpg's keyring (GNUPGHOME to use another); its public half is written beside
# them in DIR/public as rideguard-archive-keyring.gpg (for /etc/apt/keyrings) and .asc, with rideguard.sources, the
# file a rider puts in /etc/apt/sources.list.d (the URL to edit).
set -euo pipefail
key="" out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --key) key=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -*) echo "make-repo: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ -n "$key" ] && [ -n "$out" ] && [ $# -gt 0 ] || { echo "usage: make-repo.sh --key FINGERPRINT --out DIR DEB..." >&2; exit 2; }
bash "$(dirname "$0")/install-deps.sh" reprepro gnupg
started=$(date +%s)
gpg --batch --list-secret-keys "$key" > /dev/null 2>&1 || { echo "make-repo: no secret key $key in gpg's keyring${GNUPGHOME:+ ($GNUPGHOME)}" >&2; exit 1; }

public="$out/public"
mkdir -p "$out/conf" "$public"
repo=(reprepro --basedir "$out" --outdir "$public")
: > "$out/conf/distributions"
for codename in trixie bookworm; do
    cat >> "$out/conf/distributions" <<CONF
Origin: RideGuard
Label: RideGuard
Codename: $codename
Architectures: arm64 amd64
Components: main
Description: RideGuard crash detection for Raspberry Pi OS and Debian $codename
SignWith: $key

CONF
done

. "$(dirname "$0")/targets.sh"
for deb in "$@"; do
    codename=$(release_of "$(dpkg-deb -f "$deb" Version)") || { echo "make-repo: $deb was not made by scripts/build-package.sh" >&2; exit 1; }
    "${repo[@]}" --silent includedeb "$codename" "$deb"
done
# The files apt reads are re-signed even when nothing changed (a key replaced, say).
"${repo[@]}" --silent export

gpg --batch --yes --export "$key" > "$public/rideguard-archive-keyring.gpg"
gpg --batch --yes --armor --export "$key" > "$public/rideguard-archive-keyring.asc"
cat > "$public/rideguard.sources" <<SOURCES
# Suites: your Raspberry Pi OS or Debian release's codename: trixie or bookworm
# (. /etc/os-release && echo \$VERSION_CODENAME). The URL: where this folder is published.
Types: deb
URIs: https://YOUR-HOST/rideguard
Suites: trixie
Components: main
Signed-By: /etc/apt/keyrings/rideguard-archive-keyring.gpg
SOURCES
echo "make-repo: $public signed by $key in $(( $(date +%s) - started )) s:"
"${repo[@]}" list trixie
"${repo[@]}" list bookworm
