# The two README commands: `make demo` and `make test`.  Everything else is
# CMake; this file only installs what is missing and drives the builds.

SHARED  ?= $(abspath ../shared)
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
BUILD   ?= build
ASAN    ?= build-asan
FUZZ    ?= build-fuzz
REL     ?= build-release
# Seconds each libFuzzer harness runs (`make fuzz` and `make test`, i.e. CI: 60).
FUZZ_SECONDS ?= 60

# Debian 12 packages the build and tests need (apt names).
DEB_PKGS = build-essential cmake pkg-config libsqlite3-dev libpcre2-dev \
	libcriterion-dev libgsl-dev libjson-c-dev zlib1g-dev libyaml-dev \
	libjs-chart.js sqlite3 chromium clang libclang-rt-14-dev valgrind

.PHONY: all setup build build-asan build-fuzz build-release fuzz demo test clean

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

# The main job on its embedded default: the shipped projection study, priced
# with operator models fitted from the real measurements in ../shared when
# present (spec-sheet defaults otherwise), next to a real trace's breakdown,
# written as CSV (with the provenance file beside it), JSON and one
# self-contained HTML report whose assumptions are the scenario file.
DEMO = demo-out
# The scenario file the demo projects, echoed as the report's assumptions:
# the shipped study (what `cvc project` runs when given no file).
STUDY = projector/studies/default.yaml
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	@if [ -d "$(SHARED)/traces" ]; then \
		./$(BUILD)/cvc import --db $(DEMO)/demo.db --run dlrm-8xv100 \
			$(SHARED)/traces/param-dlrm-8xv100/*.json.gz && \
		./$(BUILD)/cvc import --db $(DEMO)/demo.db --run resnet-ddp-a100 \
			$(SHARED)/traces/hta-nccl-args-a100-w2/nccl_data.json.gz && \
		./$(BUILD)/cvc analyze --db $(DEMO)/demo.db && \
		./$(BUILD)/cvc fit --db $(DEMO)/demo.db \
			$(SHARED)/traces/xla-perf-tables/xla_matmul_perf_table.csv.gz \
			$(SHARED)/traces/vidur-profiling/compute/a100__Llama-2-7b-hf__mlp.csv.gz \
			>/dev/null && \
		./$(BUILD)/cvc fit --db $(DEMO)/demo.db --system dgx-h100 \
			$(SHARED)/traces/nccl-scale/h100x8_1node_dgx_nvswitch_all_reduce_perf.txt \
			$(SHARED)/traces/nccl-scale/h100x16_2node_ndr_xe9680_all_reduce_perf.txt \
			>/dev/null && \
		./$(BUILD)/cvc fit --db $(DEMO)/demo.db --system dgx-a100 \
			$(SHARED)/traces/nccl-scale/a100x8_1node_nvswitch_meta_gcm_all_reduce_perf.txt \
			$(SHARED)/traces/nccl-scale/a100x16_2node_meta_gcm_pairwise_all_reduce_perf.txt \
			>/dev/null && \
		./$(BUILD)/cvc fit --db $(DEMO)/demo.db --system dgx-b200 --gpu B200 \
			$(SHARED)/traces/nccl-scale/b200x16_2node_gcp_a4_roce_clustertoolkit_all_gather_perf.txt \
			>/dev/null && \
		./$(BUILD)/cvc fit --db $(DEMO)/demo.db --system gb200-nvl72 --gpu GB200 \
			$(SHARED)/traces/nccl-scale/gb200x72_1rack_nvl72_coreweave_all_reduce_perf.txt \
			>/dev/null; \
	else \
		echo "note: $(SHARED) is absent: projecting with spec-sheet default models"; \
		./$(BUILD)/cvc import --help >/dev/null; \
	fi
	./$(BUILD)/cvc project $(STUDY) $$( [ -f $(DEMO)/demo.db ] && echo --db $(DEMO)/demo.db ) \
		--csv $(DEMO)/study.csv --json $(DEMO)/study.json --origins
	./$(BUILD)/cvc report $$( [ -f $(DEMO)/demo.db ] && echo --db $(DEMO)/demo.db || echo --no-db ) \
		--projection $(DEMO)/study.csv --scenario $(STUDY) \
		-o $(DEMO)/report.html --csv-dir $(DEMO)/tables \
		--title "cvc: compute vs communication, shipped study"
	@echo "wrote $(DEMO)/study.csv (what priced it: $(DEMO)/study.provenance.json), $(DEMO)/study.json and $(DEMO)/report.html"

# What packagers build: Release (-O3, more inlining, more warnings under
# -Werror) with gcc and with clang; the library and the tool only.
build-release: setup
	cmake -S . -B $(REL)-gcc -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc >/dev/null
	cmake --build $(REL)-gcc --target cvc_tool -j $(JOBS)
	cmake -S . -B $(REL)-clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang >/dev/null
	cmake --build $(REL)-clang --target cvc_tool -j $(JOBS)

# Each test has a ctest TIMEOUT (CMakeLists.txt: CVC_TEST_TIMEOUT); one that
# runs past it is failed, named in the log as ***Timeout, and run once more,
# because Criterion 2.4.1's runner can deadlock for reasons of its own
# (Snaipe/Criterion#483).  A test of ours that hangs hangs twice and fails.
CTEST = ctest --output-on-failure -j $(JOBS) --repeat after-timeout:2
test: build build-asan build-release
	cd $(BUILD) && $(CTEST)
	cd $(ASAN) && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp $(CTEST)
	$(MAKE) fuzz FUZZ_SECONDS=60

# libFuzzer harnesses (clang, ASan+UBSan): tests/fuzz/fuzz.cmake, docs/RELIABILITY.md.
build-fuzz: setup
	cmake -S . -B $(FUZZ) -DCMAKE_C_COMPILER=clang -DCVC_FUZZ=ON -DCVC_WITH_CUDA=OFF \
		-DCVC_FUZZ_SECONDS=$(FUZZ_SECONDS) >/dev/null
	cmake --build $(FUZZ) --target fuzzers -j $(JOBS)

# One harness per core at a time: each libFuzzer process is single-threaded,
# and every harness keeps its own corpus, crash folder and input file.
fuzz: build-fuzz
	cd $(FUZZ) && ctest --output-on-failure -L fuzz -j $(JOBS)

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ) $(REL)-gcc $(REL)-clang demo-out
