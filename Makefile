# The two README commands: `make demo` and `make test`.  Everything else is
# CMake; this file only installs what is missing and drives the builds.

SHARED  ?= $(abspath ../shared)
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
BUILD   ?= build
ASAN    ?= build-asan

# Debian 12 packages the build and tests need (apt names).
DEB_PKGS = build-essential cmake pkg-config libsqlite3-dev libpcre2-dev \
	libcriterion-dev libgsl-dev libjson-c-dev zlib1g-dev libyaml-dev \
	libjs-chart.js sqlite3

.PHONY: all setup build build-asan demo test clean

all: build

# Installs only the packages that are missing, so a ready machine needs no root.
setup:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: setup
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

build-asan: setup
	cmake -S . -B $(ASAN) -DCMAKE_BUILD_TYPE=asan >/dev/null
	cmake --build $(ASAN) -j $(JOBS)

# The main job on its embedded default.
demo: build
	@mkdir -p demo-out
	./$(BUILD)/cvc demo --out demo-out --shared $(SHARED)

test: build build-asan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(ASAN) demo-out
