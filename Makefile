# RideGuard: build, install, package.
#   make                 release binary (Swift runtime linked in: the Pi needs no toolchain to run it)
#   sudo make install    the binaries, the units (the page's disabled), the udev rules, a default configuration, the state
#                        directory and the service user; enables the service (start it after setup)
#   make deb             build/rideguard_<version>_<arch>.deb from the same layout
#   make deb-arm64       build/rideguard_<version>_arm64.deb from any Debian machine: cross-compiled
#                        with Debian's Swift against trixie's arm64 libraries (scripts/build-arm64.sh)
#   sudo make uninstall  removes what install put in place, except the configuration and the database
# DESTDIR installs into a staging folder (as `make deb` does) without touching the system.

VERSION  ?= $(shell sed -n 's/.*static let version = "\(.*\)"/\1/p' Sources/rideguard/RideGuard.swift)
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

.PHONY: all install stage uninstall deb deb-arm64 clean

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
	install -m 0644 boards/* $(DESTDIR)$(PREFIX)/share/doc/rideguard/boards/
	# The configuration is the installer's: an existing one is never overwritten.
	install -d -m 0755 $(DESTDIR)/etc/rideguard
	if [ -e $(DESTDIR)/etc/rideguard/config.yaml ]; then \
		$(RUN) $(BINARY) config example > $(DESTDIR)/etc/rideguard/config.yaml.example; \
		echo "kept /etc/rideguard/config.yaml; the current defaults are in config.yaml.example"; \
	else \
		$(RUN) $(BINARY) config example > $(DESTDIR)/etc/rideguard/config.yaml; \
	fi
	# Installing on this machine (not into a staging folder): the user, the state directory, udev, systemd.
	if [ -z "$(DESTDIR)" ]; then $(PREFIX)/lib/rideguard/setup-system; fi

uninstall:
	-if [ -z "$(DESTDIR)" ] && command -v systemctl >/dev/null; then systemctl disable --now rideguard.service rideguard-web.service; fi
	rm -f $(DESTDIR)$(PREFIX)/bin/rideguard $(DESTDIR)$(PREFIX)/bin/rideguard-web $(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard.service \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/rideguard-web.service \
		$(DESTDIR)$(PREFIX)/lib/udev/rules.d/60-rideguard-iio.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/77-rideguard-modem.rules \
		$(DESTDIR)$(PREFIX)/share/polkit-1/rules.d/60-rideguard-poweroff.rules
	rm -rf $(DESTDIR)$(PREFIX)/lib/rideguard $(DESTDIR)$(PREFIX)/share/rideguard $(DESTDIR)$(PREFIX)/share/doc/rideguard
	@echo "kept /etc/rideguard (the configuration) and /var/lib/rideguard (contacts, journal, traces)"

deb:
	rm -rf build/deb
	$(MAKE) install DESTDIR=$(CURDIR)/$(DEBROOT) PREFIX=/usr
	bash scripts/build-deb.sh $(DEBROOT) $(VERSION) $(ARCH) $(DEB)

deb-arm64:
	bash scripts/build-arm64.sh $(VERSION)

clean:
	rm -rf build
