# RideGuard: build, install, package.
#   make                 release binary (Swift runtime linked in: the Pi needs no toolchain to run it)
#   sudo make install    the binaries, the units (the page's disabled), the udev rules, a default configuration, the state
#                        directory and the service user; enables the service (start it after setup)
#   make deb             build/rideguard_<version>_<arch>.deb from the same layout
#   make package RELEASE=trixie ARCH=arm64
#                        build/rideguard_<version>+deb13_arm64.deb from any Debian machine: cross-compiled
#                        with Debian's Swift against that release's libraries (scripts/build-package.sh);
#                        RELEASE trixie or bookworm, ARCH arm64 or amd64
#   make repo KEY=<fingerprint>
#                        the four packages, in a signed apt repository in build/repo (scripts/make-repo.sh);
#                        RELEASES="trixie bookworm" and ARCHS="arm64 amd64" choose which
#   sudo make uninstall  removes what install put in place, except the configuration and the database
# DESTDIR installs into a staging folder (as `make deb` does) without touching the system.

VERSION  ?= $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/RideGuardCommands/RideGuard.swift)
PREFIX   ?= /usr
DESTDIR  ?=
ARCH     := $(shell dpkg --print-architecture 2>/dev/null || uname -m)
BINARY   ?= .build/release/rideguard
# The page for the rider's phone, built with the same toolchain (next to BINARY).
WEBBINARY ?= $(dir $(BINARY))rideguard-web
# How to run $(BINARY) on this machine (an emulator for a cross-built one), and how to strip it.
RUN      ?=
STRIP    ?= strip
DEBROOT  := build/deb/root
DEB      := build/rideguard_$(VERSION)_$(ARCH).deb

.PHONY: all install stage uninstall deb package repo clean

all: $(BINARY)

# Always asks SwiftPM, which knows what changed.
.PHONY: $(BINARY)
$(BINARY):
	bash scripts/install-deps.sh
	swift build -c release --product rideguard --static-swift-stdlib
	swift build -c release --product rideguard-web --static-swift-stdlib

install: $(BINARY)
	$(MAKE) stage

# The files of an installation, from a binary already built.
stage:
	install -D -m 0755 $(BINARY) $(DESTDIR)$(PREFIX)/bin/rideguard
	install -D -m 0755 $(WEBBINARY) $(DESTDIR)$(PREFIX)/bin/rideguard-web
	$(STRIP) $(DESTDIR)$(PREFIX)/bin/rideguard $(DESTDIR)$(PREFIX)/bin/rideguard-web
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system $(DESTDIR)$(PREFIX)/lib/udev/rules.d
	sed 's|/usr/bin/rideguard|$(PREFIX)/bin/rideguard|' systemd/rideguard.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard.service
	sed 's|/usr/bin/rideguard|$(PREFIX)/bin/rideguard|' systemd/rideguard-web.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard-web.service
	chmod 0644 $(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard.service $(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard-web.service
	install -m 0644 udev/60-rideguard-iio.rules udev/77-rideguard-modem.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/
	install -D -m 0644 systemd/60-rideguard-poweroff.rules $(DESTDIR)$(PREFIX)/share/polkit-1/rules.d/60-rideguard-poweroff.rules
	install -D -m 0755 scripts/deb/setup-system $(DESTDIR)$(PREFIX)/lib/rideguard/setup-system
	install -D -m 0644 Tests/Fixtures/example-lowside.csv $(DESTDIR)$(PREFIX)/share/rideguard/example-lowside.csv
	install -d $(DESTDIR)$(PREFIX)/share/doc/rideguard/boards
	install -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/rideguard/
	install -d $(DESTDIR)$(PREFIX)/share/doc/rideguard/docs
	install -m 0644 docs/*.md $(DESTDIR)$(PREFIX)/share/doc/rideguard/docs/
	install -m 0644 scripts/deb/copyright $(DESTDIR)$(PREFIX)/share/doc/rideguard/copyright
	gzip -9n < scripts/deb/changelog > $(DESTDIR)$(PREFIX)/share/doc/rideguard/changelog.gz
	chmod 0644 $(DESTDIR)$(PREFIX)/share/doc/rideguard/changelog.gz
	# The manual pages, generated from the binaries (rideguard.run(1)…, rideguard-web(1), rideguard.yaml(5)).
	bash scripts/man-pages.sh $(BINARY) $(WEBBINARY) $(DESTDIR)$(PREFIX)/share/man "$(RUN)"
	install -m 0644 boards/* $(DESTDIR)$(PREFIX)/share/doc/rideguard/boards/
	# The default configuration; /etc/rideguard/config.yaml is made from it by setup-system where
	# there is none, and is never touched again (no conffile: an upgrade never asks about it).
	$(RUN) $(BINARY) config example > $(DESTDIR)$(PREFIX)/share/rideguard/config.yaml
	chmod 0644 $(DESTDIR)$(PREFIX)/share/rideguard/config.yaml
	# Installing on this machine (not into a staging folder): the user, the state directory, udev, systemd.
	if [ -z "$(DESTDIR)" ]; then $(PREFIX)/lib/rideguard/setup-system; fi

uninstall:
	-if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then systemctl disable --now rideguard.service rideguard-web.service; fi
	rm -f $(DESTDIR)$(PREFIX)/bin/rideguard $(DESTDIR)$(PREFIX)/bin/rideguard-web $(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard.service \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard-web.service \
		$(DESTDIR)$(PREFIX)/lib/udev/rules.d/60-rideguard-iio.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/77-rideguard-modem.rules \
		$(DESTDIR)$(PREFIX)/share/polkit-1/rules.d/60-rideguard-poweroff.rules
	rm -rf $(DESTDIR)$(PREFIX)/lib/rideguard $(DESTDIR)$(PREFIX)/share/rideguard $(DESTDIR)$(PREFIX)/share/doc/rideguard
	rm -f $(DESTDIR)$(PREFIX)/share/man/man1/rideguard.1.gz $(DESTDIR)$(PREFIX)/share/man/man1/rideguard.*.1.gz \
		$(DESTDIR)$(PREFIX)/share/man/man1/rideguard-web.1.gz $(DESTDIR)$(PREFIX)/share/man/man5/rideguard.yaml.5.gz
	@echo "kept /etc/rideguard (the configuration) and /var/lib/rideguard (contacts, journal, traces)"

deb:
	rm -rf build/deb
	$(MAKE) install DESTDIR=$(CURDIR)/$(DEBROOT) PREFIX=/usr
	bash scripts/build-deb.sh $(DEBROOT) $(VERSION) $(ARCH) $(DEB)

RELEASE ?= trixie
package:
	bash scripts/build-package.sh $(RELEASE) $(ARCH) $(VERSION)

REPO ?= build/repo
RELEASES ?= trixie bookworm
ARCHS ?= arm64 amd64
repo:
	@[ -n "$(KEY)" ] || { echo "make repo KEY=<the signing key's fingerprint> (gpg --list-secret-keys)"; exit 2; }
	. scripts/targets.sh && debs="" && for release in $(RELEASES); do for arch in $(ARCHS); do \
		bash scripts/build-package.sh $$release $$arch $(VERSION) || exit 1; \
		debs="$$debs build/rideguard_$(VERSION)$$(release_suffix $$release)_$$arch.deb"; \
	done; done && bash scripts/make-repo.sh --key $(KEY) --out $(REPO) $$debs

clean:
	rm -rf build
