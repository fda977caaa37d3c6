# weightd — one Makefile for the whole tree (GNU make).
#
#   make            build build/libweights.{a,so}, build/weightctl, build/weightd, build/wt-mkckpt
#   make test       install missing deps, run the suite, again under ASan/UBSan, then
#                   the threaded tests under ThreadSanitizer (make tsan)
#   make check      run the suite once (no ASan pass)
#   make asan       build into build-asan/ with -fsanitize=address,undefined and run the suite
#   make tsan       build the threaded tests into build-tsan/ with -fsanitize=thread, run them
#   make lint       clang-format check + banned functions
#   make fuzz       libFuzzer targets (tests/fuzz/fuzz_*.c) built with clang into
#                   build-fuzz/fuzz/ and run FUZZ_SECONDS (default 60) each; their
#                   corpora are replayed by `make test` (tests/integration/fuzz_replay.sh)
#   make bench      run the benchmarks in bench/
#   make reliability  load and fault scenarios (real processes, a few minutes)
#   make deps       install the Debian packages and pip tools the build and tests need
#   make install    libweights, headers, weights.pc, weightd, weightctl (PREFIX, DESTDIR)
#   make run        the README's main job
#
# Modules are folders; every *.c in a module folder is compiled into the
# internal archive. Programs have their own folders (see PROGRAMS below).
# Adding a source file never needs a Makefile edit.

BUILD    ?= build
CC       ?= cc
ifeq ($(origin NVCC),undefined)
NVCC     := $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
SAN      ?=
WERROR   ?= $(if $(filter true,$(CI)),-Werror,)

MODULES  := common loader shardmap kernels cache proto weightd client engine reference
# What the public client library libweights contains: never the store
# backends, the planner, the kernels, the reference forward pass (a test
# oracle) or the daemon (docs/architecture.md; scripts/check-abi.sh checks it).
LIB_MODULES := common proto client engine

# Shared library: file libweights.so.X.Y.Z, SONAME libweights.so.X (X = WT_VERSION_MAJOR,
# docs/client.md "ABI rules"), libweights.so -> it for the linker.
WT_VERSION := $(shell sed -n 's/^.define WT_VERSION_STRING *"\(.*\)"/\1/p' include/weights/weights.h)
SONAME     := libweights.so.$(firstword $(subst ., ,$(WT_VERSION)))
SOFILE     := libweights.so.$(WT_VERSION)

# CI builds (CI=true) keep only line tables (-g1), as the sanitizer builds do (SAN_DEBUG
# below): a failure's backtrace names the same file:line, and compiling takes about a quarter
# less CPU (30 test sources: 7.4 -> 5.4 s); a local build keeps full debug info (-g).
DEBUG    ?= $(if $(filter true,$(CI)),-g1,-g)
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -O2 $(DEBUG) -fPIC -fvisibility=hidden -pthread \
             $(WARN) $(WERROR) -Iinclude -I. -I$(BUILD)/gen -DWT_BUILDING \
             $(SANFLAGS) $(CUDA_DEFS) $(CFLAGS)
# -lcurl: only the tests and benches that call libcurl themselves record it (--as-needed below);
# the loader loads it at run time (loader/curl_dl.h), so weightctl, weightd and wt-mkckpt start
# without it.
LIBS     := -lnng -lrocksdb -lprotobuf-c -lcurl -ljansson -linih -lxxhash -lcrypto -lpthread -lm
TESTLIBS := -lcmocka
# The daemon's own libraries (never linked into libweights).
DLIBS    := -lmicrohttpd

# The AddressSanitizer/UBSan build compiles at -O1 (after -O2 in CFLAGS_ALL, so it wins): a
# third less compile time than -O2 (measured on a 1-in-25 sample of the sources: 11.4 against
# 18.0 CPU-s), the same test run time (eight of the heaviest tests: 51.3 against 50.6 CPU-s).
# Both sanitizer builds keep only line tables (-g1, after -g): a report's stack, inlined frames
# included, reads the same as with -g (file:line of every frame; checked on an inlined
# out-of-bounds read), and compiling takes a fifth less CPU (24 sources, three runs each:
# ASan 6.4-6.9 -> 4.8-5.7 s).
SAN_DEBUG := -g1
ifneq ($(SAN),)
SANFLAGS := -O1 $(SAN_DEBUG) -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
# Its programs carry the sanitizer runtimes statically: a program's start-up took 30.9 ms of CPU
# with libasan.so / libubsan.so and 22.1 ms with them linked in (weightctl --version, 6096 ->
# 4495 page faults), and the ASan pass starts thousands (shard_cli.sh alone: 1533 weightctl).
# libweights.so keeps them dynamic: a program that loads it brings the runtime (cxx_link.sh).
EXE_SAN := -static-libasan -static-libubsan
endif

# The linker: lld where $(CC) can use it (scripts/deps.sh installs it), else gold (binutils),
# else GNU ld. The ~400 test binaries link a 16 MB static library with debug info: relinking
# the plain build's tests took 88 CPU-s with GNU ld, 52 with gold, 32 with lld (each build of
# `make test` links them: the plain and the ASan build). FUSE_LD= uses the default.
ifeq ($(origin FUSE_LD),undefined)
FUSE_LD := $(firstword $(foreach l,lld gold,$(shell $(CC) -fuse-ld=$(l) -Wl,--version \
             >/dev/null 2>&1 && echo -fuse-ld=$(l))))
endif
# --as-needed: a program records only the libraries it uses (wt-mkckpt and most tests use no
# RocksDB, nng or libstdc++): weightctl's start-up 7.5 -> 5.3 ms of CPU, and the suite starts
# thousands of processes.
LDSEL := $(FUSE_LD) -Wl,--as-needed

# ---- CUDA: built whenever nvcc exists, exercised only where a GPU exists ----
CU_SRCS  := $(strip $(foreach m,$(MODULES),$(wildcard $(m)/*.cu)))
ifneq ($(NVCC),)
ifneq ($(CU_SRCS),)
CUDA_HOME := $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_DEFS := -DWT_HAVE_CUDA -I$(CUDA_HOME)/include -DWT_CUDART_DIR='"$(CUDA_HOME)/lib64"'
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lstdc++
CU_OBJS   := $(patsubst %.cu,$(BUILD)/obj/%.cu.o,$(CU_SRCS))
endif
endif

# ---- sources ----
PROTO_SRCS := $(wildcard proto/*.proto)
PROTO_GEN  := $(patsubst proto/%.proto,$(BUILD)/gen/proto/%.pb-c.c,$(PROTO_SRCS))
PROTO_OBJS := $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(PROTO_GEN))

# weightd/main.c is the daemon's main(); everything else in weightd/ is a library module.
MOD_SRCS := $(filter-out weightd/main.c,$(foreach m,$(MODULES),$(wildcard $(m)/*.c)))
MOD_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(MOD_SRCS)) $(PROTO_OBJS) $(CU_OBJS)
LIB_SRCS := $(foreach m,$(LIB_MODULES),$(wildcard $(m)/*.c))
# The safetensors format code (parser + writer; no store, no curl) is shared with the client's file sink.
LIB_SRCS += $(wildcard loader/safetensors.c loader/st_write.c)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(PROTO_OBJS) \
            $(filter $(foreach m,$(LIB_MODULES),$(BUILD)/obj/$(m)/%),$(CU_OBJS))

INTERNAL := $(BUILD)/libwt_internal.a

CTL_SRCS    := $(wildcard client/weightctl/*.c)
MKCKPT_SRCS := $(wildcard tests/fixtures/*.c)
TESTUTIL    := $(wildcard tests/util/*.c)
BENCHUTIL   := $(wildcard bench/util/*.c)
TEST_SRCS   := $(wildcard tests/test_*.c)
TEST_BINS   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TOOL_SRCS   := $(wildcard tests/tools/*.c)
TOOL_BINS   := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/wt-%,$(TOOL_SRCS))
# Fuzz targets: each linked with tests/fuzz/replay.c (a main() that replays a
# corpus; built with the tests, so `make test` needs no clang) and, in
# `make fuzz`, with clang's libFuzzer.
FUZZ_SRCS   := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES  := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_REPLAY := $(patsubst %,$(BUILD)/tests/fuzz/%,$(FUZZ_NAMES))
FUZZ_UTIL    = $(BUILD)/obj/tests/util/testutil.o $(BUILD)/obj/tests/util/pb_manifest.o \
               $(BUILD)/obj/tests/util/hostile_weightd.o
BENCH_SRCS  := $(wildcard bench/bench_*.c)
BENCH_BINS  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

PROGRAMS := $(if $(CTL_SRCS),$(BUILD)/weightctl) \
            $(if $(wildcard weightd/main.c),$(BUILD)/weightd) \
            $(if $(MKCKPT_SRCS),$(BUILD)/wt-mkckpt)

.SECONDARY:
.PHONY: all test check asan tsan lint bench deps run clean format tests benches reliability install \
        fuzz fuzz-bins
all: $(BUILD)/libweights.a $(BUILD)/$(SOFILE) $(BUILD)/libweights.so $(PROGRAMS)
	@$(if $(NVCC),,echo "nvcc not found: CUDA kernels skipped (CPU paths only)")

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

$(BUILD)/gen/proto/%.pb-c.c $(BUILD)/gen/proto/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen/proto
	protoc-c --c_out=$(BUILD)/gen proto/$*.proto

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Wno-shadow -MMD -MP -c $< -o $@

# Every object may include the generated protobuf header.
$(BUILD)/obj/%.o: %.c $(PROTO_GEN)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# The test programs' own sources (tests/test_*.c: their cases and the helpers of the headers
# they include, compiled again in each of ~340 files) at -Og: the code they test is the
# modules', built as above. Compiling a sample of 37 of them: 10.8 CPU-s at -O2 and 4.6 at -O0;
# test_shardmap_stablelm_epoch.c 529 ms at -O2, 229 at -Og (674 / 567 in the ASan build).
$(BUILD)/obj/tests/test_%.o: CFLAGS_ALL += -Og

# reference/math.c (the test oracle's linear, attention, norms) at -O2 in the sanitizer builds
# too: at -O1 its loops are not vectorised, and ref_linear alone took 2.0 of an ASan
# test_reference_olmo2's 5.7 CPU-s (0.3 of 1.35 in the plain build).
$(BUILD)/obj/reference/math.o: CFLAGS_ALL += -O2

# kernels/: vectorised loops, and float expressions evaluated exactly as written
# (docs/format.md section 4.3 is byte-exact: no contraction into FMA, no fast-math).
$(BUILD)/obj/kernels/%.o: CFLAGS_ALL += -O3 -ffp-contract=off -fno-trapping-math

# kernels/cuda_none.c compiles to the no-device fallback or to nothing depending on
# WT_HAVE_CUDA: rebuild it whenever the CUDA mode of this build dir changes.
# (A parse-time stamp: .SECONDARY would keep make from creating a missing stamp target.)
CUDA_STAMP := $(BUILD)/cuda-$(if $(CUDA_DEFS),on,off).stamp
$(shell [ -f $(CUDA_STAMP) ] || { mkdir -p $(BUILD) && rm -f $(BUILD)/cuda-*.stamp && touch $(CUDA_STAMP); })
$(BUILD)/obj/kernels/cuda_none.o: $(CUDA_STAMP)

# nvcc: IEEE division/multiply, no FMA contraction, so the GPU matches the CPU bit for bit.
$(BUILD)/obj/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 -fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
	    -DWT_HAVE_CUDA -Xcompiler -fPIC,-fvisibility=hidden -Iinclude -I. \
	    -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 -c $< -o $@

$(INTERNAL): $(MOD_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libweights.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

SOLINKS = ln -sf $(SOFILE) $(BUILD)/$(SONAME) && ln -sf $(SOFILE) $(BUILD)/libweights.so
# No CUDA_LIBS: engine/cuda_sink.c loads the CUDA runtime with dlopen (cudart.c).
$(BUILD)/$(SOFILE): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $(SANFLAGS) $(LDSEL) -o $@ $^ $(LIBS) -ldl
	$(SOLINKS)

$(BUILD)/libweights.so: $(BUILD)/$(SOFILE)
	$(SOLINKS)

$(BUILD)/weightctl: $(patsubst %.c,$(BUILD)/obj/%.o,$(CTL_SRCS)) $(INTERNAL)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(CUDA_LIBS)

$(BUILD)/weightd: $(BUILD)/obj/weightd/main.o $(INTERNAL)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(CUDA_LIBS)

$(BUILD)/wt-mkckpt: $(patsubst %.c,$(BUILD)/obj/%.o,$(MKCKPT_SRCS)) $(INTERNAL)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(CUDA_LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(patsubst %.c,$(BUILD)/obj/%.o,$(TESTUTIL)) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(TESTLIBS) $(CUDA_LIBS)

# Tests that run a weightctl command in-process (ctl_admin): its objects but main.o.
CTL_TEST_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out client/weightctl/main.c,$(CTL_SRCS)))
$(BUILD)/tests/test_weightctl_admin: $(BUILD)/obj/tests/test_weightctl_admin.o $(CTL_TEST_OBJS) \
                                     $(patsubst %.c,$(BUILD)/obj/%.o,$(TESTUTIL)) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(TESTLIBS) $(CUDA_LIBS)

# Corpus replay of a fuzz target (tests/fuzz/replay.c).
$(BUILD)/tests/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(BUILD)/obj/tests/fuzz/replay.o $(FUZZ_UTIL) \
                       $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(CUDA_LIBS)

# Test programs (never installed): tests/tools/NAME.c -> build/tests/tools/wt-NAME
$(BUILD)/tests/tools/wt-%: $(BUILD)/obj/tests/tools/%.o $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(CUDA_LIBS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCHUTIL)) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) $(EXE_SAN) $(LDSEL) -pthread -o $@ $^ $(LIBS) $(DLIBS) $(CUDA_LIBS)

tests: all $(TEST_BINS) $(TOOL_BINS) $(FUZZ_REPLAY)
benches: all $(BENCH_BINS)

# The suite: unit tests (cmocka) then integration scripts (tests/integration/*.sh).
# The normal build's suite also runs every benchmark once at its smallest size
# (tests/integration/bench_smoke.sh), so it builds them; a sanitizer build
# (SAN set: the asan pass) does not, and the smoke skips there.
check: tests $(if $(SAN),,benches)
	BUILD=$(BUILD) scripts/run-tests.sh

# make test builds with one job per core (JOBS=1 for a serial build); the
# tests themselves run as scripts/run-tests.sh and tsan-run.sh decide.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# Each sanitizer build runs behind the test pass before it (scripts/behind.sh:
# SCHED_IDLE, its output in a log, printed when it fails).
TSAN_MAKE = $(MAKE) -j$(JOBS) BUILD=build-tsan SANFLAGS="$(SAN_DEBUG) -fsanitize=thread -fno-omit-frame-pointer" all \
	    $(addprefix build-tsan/tests/,$(TSAN_TESTS))
# The ASan pass's unit tests make their fixtures with the normal build's wt-mkckpt, just built
# and tested (WT_MKCKPT, tests/util/testutil.h tu_mkckpt: the same bytes for a third of the
# CPU; each sweep made 189 fixtures with the ASan one, 23 of its 37 CPU-s); test_fixtures and
# the integration scripts still run the sanitizer build's.
test: deps
	$(MAKE) -j$(JOBS) tests benches
	@mkdir -p build-asan
	scripts/behind.sh build-asan/make.log '$(MAKE) -j$(JOBS) BUILD=build-asan SAN=1 tests' $(MAKE) check
	$(MAKE) -j$(JOBS) BUILD=build-asan SAN=1 tests
	@mkdir -p build-tsan
	scripts/behind.sh build-tsan/make.log '$(TSAN_MAKE)' env WT_TEST_THEN='$(TSAN_THEN)' \
	    WT_MKCKPT='$(abspath $(BUILD))/wt-mkckpt' $(MAKE) asan

# In make test, the ThreadSanitizer pass runs inside the ASan pass (scripts/run-tests.sh's
# WT_TEST_THEN): once its build behind has ended, after the ASan pass's foreground tests and
# beside its offline lane.
TSAN_THEN = scripts/behind.sh --await build-tsan/make.log && scripts/tsan-run.sh build-tsan $(TSAN_TESTS)

asan:
	$(MAKE) BUILD=build-asan SAN=1 check

# The tests whose code runs on several threads (digests of a checkpoint's files,
# a model's new revision opening while it is served, production threads, write-behind, cut-through, the bulk stream, the client, broadcast to replicas),
# under ThreadSanitizer; part of `make test`. RocksDB, nng and curl are not
# instrumented (tests/tsan.supp names what is RocksDB's own).
TSAN_TESTS := test_revision test_store_verify test_weightd_models test_shardmap_plan test_weightd_cut \
              test_weightd_bulk test_weightd_flow test_weightd_lanes test_weightd_peer \
              test_client test_client_async test_client_fetch test_client_retry \
              test_client_direct test_objstore test_weightd_regopen test_client_hostile \
              test_bulk_hostile test_admin_races test_weightd_reload test_bcast \
              test_bcast_slow test_weightd_rewrite test_client_stall test_objstore_version
tsan:
	$(TSAN_MAKE)
	scripts/tsan-run.sh build-tsan $(TSAN_TESTS)

# make fuzz [FUZZ_SECONDS=60] [FUZZ_TARGETS="fuzz_layout ..."] [FUZZ_FLAGS=...]:
# every target built with clang -fsanitize=fuzzer,address,undefined (no CUDA)
# into $(FUZZ_BUILD)/fuzz/, then run one after another for FUZZ_SECONDS each,
# one job, from its seeds (tests/fuzz/corpus/NAME, read only) into a working
# corpus $(FUZZ_BUILD)/fuzz/corpus/NAME. A crash leaves its input as
# $(FUZZ_BUILD)/fuzz/NAME-crash-* (minimize it with -minimize_crash=1, fix
# the bug, add the input to tests/fuzz/corpus/NAME). Not part of `make test`.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(FUZZ_NAMES)
FUZZ_FLAGS   ?=
FUZZ_SAN     := -fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-omit-frame-pointer \
                -fno-sanitize-recover=undefined
fuzz:
	$(MAKE) -j$(JOBS) BUILD=$(FUZZ_BUILD) CC=clang NVCC= SANFLAGS="$(FUZZ_SAN)" fuzz-bins
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_BUILD)/fuzz/corpus/$$t; \
	    echo "== $$t: $(FUZZ_SECONDS) s"; \
	    $(FUZZ_BUILD)/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
	        -artifact_prefix=$(FUZZ_BUILD)/fuzz/$$t- -print_final_stats=1 $(FUZZ_FLAGS) \
	        $(FUZZ_BUILD)/fuzz/corpus/$$t tests/fuzz/corpus/$$t; \
	done

fuzz-bins: $(patsubst %,$(BUILD)/fuzz/%,$(FUZZ_NAMES))

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(FUZZ_UTIL) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -fsanitize=fuzzer -pthread -o $@ $^ $(LIBS) $(DLIBS)

deps:
	@scripts/deps.sh

# make install [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=$(PREFIX)/lib]: see scripts/install.sh.
PREFIX ?= /usr/local
install: all
	BUILD=$(BUILD) PREFIX=$(PREFIX) LIBDIR=$(or $(LIBDIR),$(PREFIX)/lib) DESTDIR=$(DESTDIR) \
	    SOFILE=$(SOFILE) SONAME=$(SONAME) WT_VERSION=$(WT_VERSION) scripts/install.sh

run: deps
	$(MAKE) all
	scripts/main-job.sh

# Load and fault scenarios with real processes on 127.0.0.1 (a few minutes; as
# root for the ENOSPC scenario's tmpfs). Not part of `make test`.
reliability: all tests
	WT_BUILD=$(BUILD) python3 tests/reliability/reliability.py

bench: benches
	@for b in $(BENCH_BINS); do echo "== $$b"; $$b || exit 1; done

C_FILES = $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cu' '*.cpp' '*.hpp' 2>/dev/null)
lint:
	@clang-format --dry-run --Werror $(C_FILES)
	@! grep -nE '\b(strcpy|sprintf|strtok|atoi|gets)[[:space:]]*\(' $(C_FILES) || \
	    { echo "lint: banned function (use snprintf/strtol/strtok_r/memcpy)"; exit 1; }
	@echo "lint: ok"

format:
	clang-format -i $(C_FILES)

clean:
	rm -rf build build-asan build-tsan build-fuzz
