# SPDX-License-Identifier: Apache-2.0
# The releases and architectures RideGuard is packaged for, in one place; sourced by
# scripts/sysroot.sh, build-package.sh, make-repo.sh and check-repo.sh (and `make repo`).
#   release_suffix RELEASE    what the package's version ends with: +deb13 (trixie), +deb12 (bookworm)
#   release_of VERSION        the release a package version names, back from its suffix
#   release_gcc RELEASE       the GCC whose C++ runtime the release's libraries use
#   arch_triple ARCH          the target Debian's Swift compiles ARCH for
#   arch_multiarch ARCH       where the release keeps ARCH's libraries (/usr/lib/<multiarch>)
#   arch_emulator ARCH        qemu-user's program for running ARCH's binaries here
# Each fails (status 1, a message) on a name it does not know.
release_suffix() {
    case "$1" in trixie) echo +deb13 ;; bookworm) echo +deb12 ;;
        *) echo "no release '$1' (trixie, bookworm)" >&2; return 1 ;; esac
}
release_of() {
    case "$1" in *+deb13) echo trixie ;; *+deb12) echo bookworm ;;
        *) echo "version $1 names no release (+deb13, +deb12)" >&2; return 1 ;; esac
}
release_gcc() {
    case "$1" in trixie) echo 14 ;; bookworm) echo 12 ;;
        *) echo "no release '$1' (trixie, bookworm)" >&2; return 1 ;; esac
}
arch_triple() {
    # Debian's Swift names its amd64 target x86_64-pc-linux-gnu.
    case "$1" in arm64) echo aarch64-unknown-linux-gnu ;; amd64) echo x86_64-pc-linux-gnu ;;
        *) echo "no architecture '$1' (arm64, amd64)" >&2; return 1 ;; esac
}
arch_multiarch() {
    case "$1" in arm64) echo aarch64-linux-gnu ;; amd64) echo x86_64-linux-gnu ;;
        *) echo "no architecture '$1' (arm64, amd64)" >&2; return 1 ;; esac
}
arch_emulator() {
    case "$1" in arm64) echo qemu-aarch64-static ;; amd64) echo qemu-x86_64-static ;;
        *) echo "no architecture '$1' (arm64, amd64)" >&2; return 1 ;; esac
}
