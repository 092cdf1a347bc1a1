# EARTH node runtime - top-level build.
#   make            build the library, demo and benchmarks into build/
#   make run        the main job: install what is missing, build, run the demo
#   make test       install what is missing, then the whole suite CI runs
#                   (tests/table.txt; the steps: "make test" below)
#   make check      the fast tier for the edit-test loop: format, layers,
#                   the unit tests marked check (under 3 minutes built)
#   make bench      run every benchmark (QUICK=1 for a short run)
#   make install PREFIX=/usr/local    (make uninstall, same PREFIX, undoes it)
# V=1 shows full commands.

CC      ?= gcc
ifeq ($(CC),cc)
CC      := gcc
endif
PREFIX  ?= /usr/local
BUILD   ?= build
Q       := $(if $(V),,@)

WARN    := -Wall -Wextra -Werror -Wshadow -Wundef -Wstrict-prototypes \
           -Wmissing-prototypes -Wno-missing-field-initializers
CSTD    := -std=gnu17
# UCX and PMIx (the ucx transport): PMIx's headers and library live in
# a folder of their own on Debian (pkg-config pmix).
PMIX_CFLAGS := $(shell pkg-config --cflags pmix 2>/dev/null)
PMIX_LIBS := $(shell pkg-config --libs pmix 2>/dev/null || echo -lpmix)
# Runtime headers are included by layer folder ("su/su.h"), the queue
# library's by its folder ("queues/q_ring.h").
INC     := -Iruntime/include -Iruntime -I. -Ithreaded-c/examples $(PMIX_CFLAGS)
BASE    := $(CSTD) $(WARN) $(INC) -g -pthread -fno-strict-aliasing -MMD -MP
OPT     := -O2
LIBS    := -lhwloc -lnuma -ldl -lpthread -luring -lsodium -lucp -luct -lucs \
           $(PMIX_LIBS)
ASAN    := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all \
           -fno-omit-frame-pointer
TSAN    := -O1 -fsanitize=thread -fno-omit-frame-pointer

# The shared library's soname and file (version from earth.h). While the
# major version is 0 every minor version may change the ABI (a struct that
# grew), so the soname carries it: programs built against 0.1 do not load
# 0.2.
EARTH_MINOR := $(shell sed -n 's/^\#define EARTH_VERSION_MINOR //p' runtime/include/earth.h)
SO_NAME := libearth.so.0.$(EARTH_MINOR)
SO_REAL := libearth.so.0.$(EARTH_MINOR).0

# The queue library (queues/, a library of its own at the bottom) and the
# node's layers above it, bottom to top (docs/architecture.md, "Layers").
QUEUE_SRC := $(wildcard queues/*.c)
LAYERS  := base net gas unit dsm eu su node
LIB_SRC := $(QUEUE_SRC) $(foreach l,$(LAYERS),$(wildcard runtime/$(l)/*.c))
TEST_SRC := $(wildcard tests/t_*.c)
# Linked into every test binary: test helpers and the shared example
# threaded functions.
EXAMPLE_TF := threaded-c/examples/fib_tf.c threaded-c/examples/nqueens_tf.c
TEST_HELPERS := $(filter-out $(TEST_SRC),$(wildcard tests/*.c)) \
                queues/tests/qtest.c $(EXAMPLE_TF)
# What `make test` runs and how: tests/table.txt, one row per test binary
# (check, job, tsan, modes, eus). A source without a row, or a row without a
# source, stops the build.
TEST_TABLE := tests/table.txt
TEST_NAMES := $(shell awk '!/^\#/ && NF { print $$1 }' $(TEST_TABLE))
tests_with = $(shell awk -v w=$(1) '!/^\#/ { for (i = 2; i <= NF; i++) \
               if ($$i == w) print $$1 }' $(TEST_TABLE))
CHECK_TESTS := $(call tests_with,check)
JOB_TESTS := $(call tests_with,job)
TSAN_TEST_NAMES := $(call tests_with,tsan)
MODE_TESTS := $(call tests_with,modes)
EUS_TESTS := $(call tests_with,eus)
TSAN_JOB_TESTS := $(filter $(JOB_TESTS),$(TSAN_TEST_NAMES))
QUEUE_TEST_SRC := $(wildcard queues/tests/t_*.c)
QUEUE_TESTS := $(patsubst queues/tests/%.c,%,$(QUEUE_TEST_SRC))
TEST_SOURCE_NAMES := $(patsubst tests/%.c,%,$(TEST_SRC)) $(QUEUE_TESTS)
ifneq ($(filter-out $(TEST_NAMES),$(TEST_SOURCE_NAMES)),)
$(error $(TEST_TABLE): no row for $(filter-out $(TEST_NAMES),$(TEST_SOURCE_NAMES)): add one (its words say how make test runs it))
endif
ifneq ($(filter-out $(TEST_SOURCE_NAMES),$(TEST_NAMES)),)
$(error $(TEST_TABLE): $(filter-out $(TEST_SOURCE_NAMES),$(TEST_NAMES)) has no source in tests/ or queues/tests/)
endif
BENCH_SRC := $(filter-out benchmarks/bench.c benchmarks/bench_fib.c,$(wildcard benchmarks/*.c))
# Linked into every benchmark: the harness and benchmarks/lib/ (starting
# jobs, pair statistics, floors, plots). Benchmarks of several files live
# in a folder of their own with a module.mk (included below).
BENCH_LIB := benchmarks/bench.c $(wildcard benchmarks/lib/*.c)

# $(call objs,VARIANT,SOURCES)
objs = $(patsubst %.c,$(BUILD)/$(1)/obj/%.o,$(2))

.SECONDARY:
.PHONY: all run test check soak test-asan test-asan-modes test-asan-eus test-tsan check-asan test-layers test-format bench bench-extra install deps clean format
all: $(BUILD)/rel/lib/libearth.a $(BUILD)/rel/lib/earth.libs $(BUILD)/pic/lib/$(SO_REAL) $(BUILD)/rel/bin/demo $(BUILD)/rel/bin/earthrun \
     $(BUILD)/rel/bin/earthtrace \
     $(patsubst benchmarks/%.c,$(BUILD)/rel/bench/%,$(BENCH_SRC))

# ---- dependencies: the one place that installs packages ----
# `make deps` (called by `make run`, `make test` and `make bench`, never by
# `make` or `make install`) installs what is missing with apt-get: the
# packages the build and the tests need (a failure stops), then those only
# some parts use (a failure only loses those parts, each says so).
DEB_PKGS := gcc make pkg-config libnuma-dev liburing-dev libcriterion-dev \
            libsodium-dev libhwloc-dev libjansson-dev iproute2 clang-format \
            libucx-dev ucx-utils libssl-dev libpmix-dev
# The Threaded-C plugin and earthcc (compiler-plugin/module.mk; Clang 14
# pinned: a plugin built for another major version crashes its clang), the
# LL7 and remote-load plots (gnuplot), the side-by-side comparisons
# (benchmarks/compare: oneTBB, Open MPI), the Open MPI floors beside UCX's
# (benchmarks/ucx_floor), the srun launch test (a one-host Slurm cluster,
# tests/slurm.sh: Slurm's daemons and client, munge).
DEB_OPT_PKGS := clang-14 llvm-14-dev libclang-14-dev gnuplot-nox g++ \
                libtbb-dev libopenmpi-dev openmpi-bin slurmd slurmctld \
                slurm-client munge
DEPS_STAMP := $(BUILD)/.deps-ok
deps: $(DEPS_STAMP)
$(DEPS_STAMP):
	$(Q)missing() { for p in "$$@"; do \
	    dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" \
	      || printf ' %s' $$p; done; }; \
	need="$$(missing $(DEB_PKGS))"; opt="$$(missing $(DEB_OPT_PKGS))"; \
	[ -z "$$need$$opt" ] && exit 0; \
	SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	$$SUDO apt-get update -qq || echo "deps: apt-get update failed" >&2; \
	if [ -n "$$need" ]; then \
	  echo "deps: installing$$need"; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$need \
	    >/dev/null || { echo "deps: apt-get install$$need failed: the build" \
	      "and the tests need them" >&2; exit 1; }; \
	fi; \
	if [ -n "$$opt" ]; then \
	  echo "deps: installing$$opt (optional parts)"; \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$opt \
	    >/dev/null || echo "deps: apt-get install$$opt failed: the Threaded-C" \
	      "plugin, the plots or the comparisons that need them are skipped" >&2; \
	fi
	$(Q)mkdir -p $(@D) && touch $@

# ---- the library in three variants: rel, asan, tsan ----
$(BUILD)/rel/obj/%.o: %.c
	@mkdir -p $(@D); $(if $(Q),echo "  CC      $<";)
	$(Q)$(CC) $(BASE) $(OPT) $(CFLAGS) -c $< -o $@
$(BUILD)/asan/obj/%.o: %.c
	@mkdir -p $(@D); $(if $(Q),echo "  CC asan $<";)
	$(Q)$(CC) $(BASE) $(ASAN) $(CFLAGS) -c $< -o $@
$(BUILD)/tsan/obj/%.o: %.c
	@mkdir -p $(@D); $(if $(Q),echo "  CC tsan $<";)
	$(Q)$(CC) $(BASE) $(TSAN) $(CFLAGS) -c $< -o $@

# The shared library: its objects built with -fPIC in a variant of its
# own. Its data stays in the library's segment, which is never memory
# other nodes may reach, so it needs no renamed sections.
$(BUILD)/pic/obj/%.o: %.c
	@mkdir -p $(@D); $(if $(Q),echo "  CC pic  $<";)
	$(Q)$(CC) $(BASE) $(OPT) -fPIC $(CFLAGS) -c $< -o $@
$(BUILD)/pic/lib/$(SO_REAL): $(call objs,pic,$(LIB_SRC))
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) -shared -pthread -Wl,-soname,$(SO_NAME) -Wl,-z,defs $^ \
	  $(LIBS) -o $@
	$(Q)ln -sf $(SO_REAL) $(@D)/$(SO_NAME) && ln -sf $(SO_NAME) $(@D)/libearth.so

# The runtime's own writable data in sections of its own, which
# gas/registry.c leaves out of the memory other nodes may reach.
RT_SECTIONS := --rename-section .data=earth_rt_data \
               --rename-section .data.rel.local=earth_rt_data \
               --rename-section .data.rel=earth_rt_data \
               --rename-section .bss=earth_rt_bss
# What a program links with libearth.a (earthcc in the source tree reads it;
# the installed earthcc and the .pc files get LIBS written in).
$(BUILD)/rel/lib/earth.libs: Makefile
	@mkdir -p $(@D)
	$(Q)echo '$(strip $(LIBS))' > $@
$(BUILD)/rel/lib/libearth.a: $(call objs,rel,$(LIB_SRC))
$(BUILD)/asan/lib/libearth.a: $(call objs,asan,$(LIB_SRC))
$(BUILD)/tsan/lib/libearth.a: $(call objs,tsan,$(LIB_SRC))
$(BUILD)/rel/lib/libearth.a $(BUILD)/asan/lib/libearth.a $(BUILD)/tsan/lib/libearth.a:
	@mkdir -p $(@D); $(if $(Q),echo "  AR      $@";)
	$(Q)rm -f $@ && ar rcs $@ $^
	$(Q)objcopy $(RT_SECTIONS) $@

# ---- programs ----
# The version every tool and program prints (--version, --earth-version).
VERSION := $(shell cat VERSION)
VERSIONED := runtime/launcher/earthrun_parse.c runtime/launcher/earthtrace.c \
             runtime/node/options.c
$(foreach v,rel asan tsan,$(call objs,$(v),$(VERSIONED))): VERSION
$(foreach v,rel asan tsan,$(call objs,$(v),$(VERSIONED))): CFLAGS += -DEARTH_VERSION='"$(VERSION)"'

$(BUILD)/rel/bin/demo: $(call objs,rel,threaded-c/examples/demo.c $(EXAMPLE_TF)) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -o $@

$(BUILD)/rel/bin/earthrun: $(call objs,rel,runtime/launcher/earthrun.c \
    runtime/launcher/earthrun_parse.c runtime/launcher/earthrun_map.c \
    runtime/launcher/earthrun_spawn.c runtime/launcher/earthrun_watch.c \
    runtime/base/jsonparts.c runtime/base/settings.c)
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ -o $@

# earthtrace reads any trace-event JSON with jansson.
$(BUILD)/rel/bin/earthtrace: $(call objs,rel,runtime/launcher/earthtrace.c)
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ -ljansson -lm -o $@

$(BUILD)/rel/bench/%: $(call objs,rel,benchmarks/%.c $(BENCH_LIB) $(EXAMPLE_TF)) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@

# The timed fib main shared by two benchmarks.
$(BUILD)/rel/bench/fib $(BUILD)/rel/bench/trace_cost: $(call objs,rel,benchmarks/bench_fib.c)

$(BUILD)/asan/tests/%: $(call objs,asan,tests/%.c $(TEST_HELPERS)) $(BUILD)/asan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD asan $@";)
	$(Q)$(CC) $(BASE) $(ASAN) $^ $(LIBS) -lcriterion -o $@
# The benchmark harness's own test links it.
$(BUILD)/asan/tests/t_bench: $(call objs,asan,$(BENCH_LIB))
# Criterion cannot start under TSan (Snaipe/Criterion#274): the TSan tests
# include the stand-in headers in tests/tsan/ and link its runner instead
# of -lcriterion (tests/tsan/README.md). The headers are prerequisites so
# that objects built against the real ones are rebuilt.
TSAN_SHIM := tests/tsan/runner.c
TSAN_SHIM_H := $(wildcard tests/tsan/criterion/*.h)
$(BUILD)/tsan/obj/tests/%.o: tests/%.c $(TSAN_SHIM_H)
	@mkdir -p $(@D); $(if $(Q),echo "  CC tsan $<";)
	$(Q)$(CC) -Itests/tsan $(BASE) $(TSAN) $(CFLAGS) -c $< -o $@
$(BUILD)/tsan/tests/%: $(call objs,tsan,tests/%.c $(TEST_HELPERS) $(TSAN_SHIM)) $(BUILD)/tsan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD tsan $@";)
	$(Q)$(CC) $(BASE) $(TSAN) $^ $(LIBS) -o $@

# Programs the multi-node tests start with earthrun, per variant.
# A program's globals apart from the static libraries' (earth_dsm.h).
DSM_LD := -Wl,-T,runtime/earth_dsm.ld
TEST_PROGS := $(patsubst tests/progs/%.c,%,$(wildcard tests/progs/*.c))
$(BUILD)/asan/progs/%: $(call objs,asan,tests/progs/%.c $(EXAMPLE_TF)) $(BUILD)/asan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD asan $@";)
	$(Q)$(CC) $(BASE) $(ASAN) $^ $(LIBS) $(DSM_LD) -o $@
$(BUILD)/tsan/progs/%: $(call objs,tsan,tests/progs/%.c $(EXAMPLE_TF)) $(BUILD)/tsan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD tsan $@";)
	$(Q)$(CC) $(BASE) $(TSAN) $^ $(LIBS) $(DSM_LD) -o $@
$(JOB_TESTS:%=$(BUILD)/asan/tests/%): | $(addprefix $(BUILD)/asan/progs/,$(TEST_PROGS)) $(BUILD)/rel/bin/earthrun
$(TSAN_JOB_TESTS:%=$(BUILD)/tsan/tests/%): | $(addprefix $(BUILD)/tsan/progs/,$(TEST_PROGS)) $(BUILD)/rel/bin/earthrun
$(JOB_TESTS:%=$(BUILD)/asan/obj/tests/%.o): CFLAGS += -DT_PROG_DIR='"$(BUILD)/asan/progs"' -DT_EARTHRUN='"$(BUILD)/rel/bin/earthrun"'
$(TSAN_JOB_TESTS:%=$(BUILD)/tsan/obj/tests/%.o): CFLAGS += -DT_PROG_DIR='"$(BUILD)/tsan/progs"' -DT_EARTHRUN='"$(BUILD)/rel/bin/earthrun"'
# The observability tests also draw their traces.
$(BUILD)/asan/tests/t_trace: | $(BUILD)/rel/bin/earthtrace
$(BUILD)/asan/obj/tests/t_trace.o: CFLAGS += -DT_EARTHTRACE='"$(BUILD)/rel/bin/earthtrace"'
# The settings table (tests/t_settings.c): a program's --earth-help against
# the user guide's table.
$(BUILD)/asan/tests/t_settings: | $(BUILD)/asan/progs/multinode
$(BUILD)/asan/obj/tests/t_settings.o: CFLAGS += -DT_PROG_DIR='"$(BUILD)/asan/progs"' -DT_USER_GUIDE='"docs/user-guide.md"'

# The queue library's tests link the library alone.
QUEUE_TEST_OBJ = $(call objs,$(1),queues/tests/qtest.c $(QUEUE_SRC))
$(QUEUE_TESTS:%=$(BUILD)/asan/tests/%): $(BUILD)/asan/tests/%: $(call objs,asan,queues/tests/%.c) $(call QUEUE_TEST_OBJ,asan)
	@mkdir -p $(@D); $(if $(Q),echo "  LD asan $@";)
	$(Q)$(CC) $(BASE) $(ASAN) $^ -lnuma -lcriterion -o $@
$(BUILD)/tsan/obj/queues/tests/%.o: queues/tests/%.c $(TSAN_SHIM_H)
	@mkdir -p $(@D); $(if $(Q),echo "  CC tsan $<";)
	$(Q)$(CC) -Itests/tsan $(BASE) $(TSAN) $(CFLAGS) -c $< -o $@
$(QUEUE_TESTS:%=$(BUILD)/tsan/tests/%): $(BUILD)/tsan/tests/%: $(call objs,tsan,queues/tests/%.c $(TSAN_SHIM)) $(call QUEUE_TEST_OBJ,tsan)
	@mkdir -p $(@D); $(if $(Q),echo "  LD tsan $@";)
	$(Q)$(CC) $(BASE) $(TSAN) $^ -lnuma -pthread -o $@

ASAN_BINS := $(patsubst tests/%.c,$(BUILD)/asan/tests/%,$(TEST_SRC)) \
             $(QUEUE_TESTS:%=$(BUILD)/asan/tests/%)
TSAN_BINS := $(TSAN_TEST_NAMES:%=$(BUILD)/tsan/tests/%)
MODE_BINS := $(MODE_TESTS:%=$(BUILD)/asan/tests/%)
EUS_BINS := $(EUS_TESTS:%=$(BUILD)/asan/tests/%)
CHECK_BINS := $(CHECK_TESTS:%=$(BUILD)/asan/tests/%)

# ---- main job ----
# The headline experiment (benchmarks/main_job.sh): Table 2, Livermore
# Loop 7 latency hiding (Figure 3) with its plots, a traced 2-node job.
MAIN_JOB_BINS := $(BUILD)/rel/bench/eu_overhead $(BUILD)/rel/bench/ll7 \
                 $(BUILD)/rel/bench/ll7.gp \
                 $(BUILD)/rel/bin/earthrun $(BUILD)/rel/bin/earthtrace
# deps first, alone: a parallel build must not compile before the headers
# are installed.
run: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory $(MAIN_JOB_BINS)
	$(Q)benchmarks/main_job.sh $(BUILD)

# ---- make test, make check: the pipelines, in order ----
# `make test` (CI; 25 to 45 minutes on two vCPUs from a fresh clone;
# tests/README.md has the times of each step):
#   build    every binary the steps run (test-build), on every CPU
#   format   every C and C++ source as .clang-format says
#   layers   no layer includes or calls one above or beside it; the maps
#            (runtime/README.md, queues/README.md) name every file
#   man      every man page formats; every function of earth.h has one
#   install  install into a temporary prefix, build and run a program
#            against it, uninstall
#   docs     the shell blocks and complete examples of README.md, docs/
#            and the man pages run as written (tests/docs.sh)
#   parmacs  the PARMACS programs of tests/parmacs built with their own
#            Makefile through earthcc, run on 1-4 nodes (tests/t_parmacs.sh)
#   asan     every test binary of tests/table.txt under ASan+UBSan
#   modes    those marked modes again per single-core node mode
#   eus      those marked eus again with nodes of 2 and of 3 EUs
#   tsan     those marked tsan under TSan
#   fuzz     each libFuzzer target briefly (tests/fuzz/)
#   bench    `QUICK=1 make bench` into a scratch folder: every benchmark
#            runs and prints its figures (none judged here)
# `make check`, the edit-test loop (under 3 minutes once built): format,
# layers, and the binaries marked check under ASan+UBSan.
# Each test binary runs its suites one at a time (a node pins two CPUs);
# what they all need is built first, on every CPU (test-build).
test: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory -j$(NPROC) test-build
	$(Q)$(MAKE) --no-print-directory test-format
	$(Q)$(MAKE) --no-print-directory test-layers
	$(Q)$(MAKE) --no-print-directory test-man
	$(Q)$(MAKE) --no-print-directory test-install
	$(Q)$(MAKE) --no-print-directory test-docs
	$(Q)$(MAKE) --no-print-directory test-parmacs
	$(Q)$(MAKE) --no-print-directory test-asan
	$(Q)$(MAKE) --no-print-directory test-asan-modes
	$(Q)$(MAKE) --no-print-directory test-asan-eus
	$(Q)$(MAKE) --no-print-directory test-tsan
	$(Q)$(MAKE) --no-print-directory test-fuzz
	$(Q)$(MAKE) --no-print-directory test-bench
# Every binary the pipelines of `make test` run or build against (the
# fuzz targets add theirs in tests/fuzz/module.mk); the pipelines run one
# after another, their builds are done by then.
NPROC := $(shell nproc 2>/dev/null || echo 1)
test-build: $(ASAN_BINS) $(TSAN_BINS) tc tc-tsan apps all bench-extra \
            $(BUILD)/rel/bin/earthrun $(BUILD)/rel/bin/earthtrace
.PHONY: test-build
check: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory test-format
	$(Q)$(MAKE) --no-print-directory test-layers
	$(Q)$(MAKE) --no-print-directory check-asan

test-layers: $(BUILD)/asan/lib/libearth.a
	$(Q)tools/check-layers.sh $(BUILD)/asan/obj
ASAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The Threaded-C tests run earthcc and earthrun, t_apps the benchmark
# programs: built first, found through EARTH_BUILD.
test-asan check-asan: export EARTH_BUILD := $(abspath $(BUILD))
test-asan: $(ASAN_BINS) tc apps $(BUILD)/rel/bin/earthrun
	$(Q)$(ASAN_ENV) tests/run.sh asan $(ASAN_BINS)
test-asan-modes: $(MODE_BINS)
	$(Q)for m in single-interrupt single-poll; do \
	  $(ASAN_ENV) EARTH_MODE=$$m tests/run.sh asan/$$m $(MODE_BINS) || exit 1; \
	done
# Nodes of several EUs (every node of a job: earthrun passes EARTH_EUS on).
test-asan-eus: export EARTH_BUILD := $(abspath $(BUILD))
test-asan-eus: $(EUS_BINS) tc apps $(BUILD)/rel/bin/earthrun
	$(Q)for k in 2 3; do \
	  $(ASAN_ENV) EARTH_EUS=$$k tests/run.sh asan/eus$$k $(EUS_BINS) || exit 1; \
	done
check-asan: $(CHECK_BINS) tc
	$(Q)$(ASAN_ENV) tests/run.sh check $(CHECK_BINS)
# `make soak`: the job tests (the `job` rows of tests/table.txt) SOAK times
# back to back (10 by default), stopping at the first failure with its
# round, binary and tests (tests/soak.sh); SOAK_TESTS="t_reject t_ucx"
# soaks those only.
SOAK ?= 10
SOAK_TESTS ?= $(JOB_TESTS)
soak: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory $(SOAK_TESTS:%=$(BUILD)/asan/tests/%)
	$(Q)$(ASAN_ENV) tests/soak.sh $(SOAK) $(SOAK_TESTS:%=$(BUILD)/asan/tests/%)
# t_tc_dsm builds its Threaded-C programs with earthcc's
# EARTHCC_SANITIZE=thread: the plugin and the tsan libearth_tc.a first.
test-tsan: export EARTH_BUILD := $(abspath $(BUILD))
test-tsan: $(TSAN_BINS) tc-tsan $(BUILD)/rel/bin/earthrun
	$(Q)TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" EARTH_TEST_SCALE=10 Q_TEST_SCALE=10 \
	  tests/run.sh tsan $(TSAN_BINS)

# ---- benchmarks ----
# `make bench` writes into a results folder of its own,
# $(BUILD)/results/<UTC date-time>-<host>/, and leaves the committed
# docs/results alone; `make bench UPDATE_DOCS=1` (or RESULTS_DIR=docs/results)
# updates those, RESULTS_DIR=DIR writes into DIR. The same for
# `make apps-bench`.
ifneq ($(filter bench apps-bench,$(MAKECMDGOALS)),)
ifeq ($(UPDATE_DOCS),1)
RESULTS_DIR := docs/results
endif
ifeq ($(strip $(RESULTS_DIR)),)
RESULTS_DIR := $(BUILD)/results/$(shell date -u +%Y%m%d-%H%M%S)-$(shell hostname -s 2>/dev/null || echo host)
endif
export RESULTS_DIR
endif
# `make bench`: builds every benchmark (the apps and the comparisons'
# other sides where their compilers are), then benchmarks/run.sh runs them
# all: every program of $(BUILD)/rel/bench, the benchmark programs
# (benchmarks/apps/run_apps.sh) and Table 3 (threaded-c/bench/table3.sh);
# metrics.csv holds every figure.
bench: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory all bench-extra apps
	@echo "bench: results into $(RESULTS_DIR)"
	$(Q)QUICK=$(QUICK) RESULTS_DIR=$(RESULTS_DIR) EARTH_BUILD=$(abspath $(BUILD)) \
	  BUILD=$(BUILD) benchmarks/run.sh $(BUILD)/rel/bench
	@echo "bench: results in $(RESULTS_DIR)"
# Every benchmark, briefly, its results into a scratch folder (the
# figures are judged by people, never here; a driver that fails fails).
test-bench: $(DEPS_STAMP)
	$(Q)d=$$(mktemp -d) && \
	  $(MAKE) --no-print-directory bench QUICK=1 RESULTS_DIR=$$d && \
	  rm -rf $$d
.PHONY: test-bench
# `make device-pack`: the benchmarks that need more cores than this
# machine has, with their libraries, in $(BUILD)/device for a larger
# machine (benchmarks/device/README.md).
# The Threaded-C and PARMACS programs are rebuilt with the apps: linked
# against the runtime of the tree, never an older build's.
device-pack: $(DEPS_STAMP)
	$(Q)$(MAKE) --no-print-directory all bench-extra apps
	$(Q)benchmarks/device/pack.sh $(BUILD)
.PHONY: device-pack
# What the benchmarks need beyond `make`: the other sides of the
# comparisons and the floors (benchmarks/compare, benchmarks/ucx_floor),
# the helpers (median, driver) beside the drivers that source them.
bench-extra: compare-extra ucx-floor-extra $(BUILD)/rel/bench/lib/median.sh \
  $(BUILD)/rel/bench/lib/driver.sh
$(BUILD)/rel/bench/lib/%.sh: benchmarks/lib/%.sh
	@mkdir -p $(@D); cp $< $@

# ---- install ----
# `make install` builds what it installs but never installs packages (deps
# is not one of its prerequisites). What it installs under $(PREFIX) is in
# INST_FILES (and TC_INST_FILES, compiler-plugin/module.mk); `make uninstall`
# removes exactly those (README.md, "Install").
MAN1 := $(wildcard man/man1/*.1)
MAN3 := $(wildcard man/man3/*.3)
MAN7 := $(wildcard man/man7/*.7)
INST_LIB := $(DESTDIR)$(PREFIX)/lib
INST_FILES := $(PREFIX)/include/earth.h $(PREFIX)/include/earth_dsm.h \
              $(PREFIX)/include/earth_dsm_fiber.h \
              $(PREFIX)/lib/libearth.a \
              $(PREFIX)/lib/$(SO_REAL) $(PREFIX)/lib/$(SO_NAME) \
              $(PREFIX)/lib/libearth.so $(PREFIX)/lib/pkgconfig/earth.pc \
              $(PREFIX)/bin/earthrun $(PREFIX)/bin/earthtrace \
              $(MAN1:man/%=$(PREFIX)/share/man/%) \
              $(MAN3:man/%=$(PREFIX)/share/man/%) \
              $(MAN7:man/%=$(PREFIX)/share/man/%)
# The folders the dynamic loader searches untold (ld.so.conf and its
# trusted folders): a libearth.so installed there is found through
# ldconfig's cache, which install refreshes; one installed elsewhere
# through the run path that earth.pc and earth-tc.pc give every program
# linked through them (INST_RPATH, written into their Libs).
LOADER_DIRS = $(shell PATH="$$PATH:/sbin:/usr/sbin" ldconfig -v -N 2>/dev/null | \
                sed -n 's|^\(/[^:]*\):.*|\1|p') /lib /usr/lib \
              /usr/lib/$(shell gcc -print-multiarch 2>/dev/null)
INST_SYSTEM = $(filter $(abspath $(PREFIX)/lib),$(LOADER_DIRS))
INST_RPATH = $(if $(INST_SYSTEM),,-Wl,-rpath,$${libdir} )
# After installing into a folder the loader searches: its cache.
define INST_LDCONFIG
	$(Q)if [ -n "$(INST_SYSTEM)" ] && [ -z "$(DESTDIR)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then PATH="$$PATH:/sbin:/usr/sbin" ldconfig; \
	  else echo "install: run ldconfig as root so that the loader finds" \
	    "$(PREFIX)/lib/$(SO_NAME)"; fi; fi
endef
.PHONY: uninstall test-install test-man test-docs
install: $(BUILD)/rel/lib/libearth.a $(BUILD)/rel/lib/earth.libs $(BUILD)/pic/lib/$(SO_REAL) \
         $(BUILD)/rel/bin/earthrun $(BUILD)/rel/bin/earthtrace
	install -d $(DESTDIR)$(PREFIX)/include $(INST_LIB)/pkgconfig \
	  $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 644 runtime/include/earth.h runtime/include/earth_dsm.h \
	  runtime/include/earth_dsm_fiber.h \
	  $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(BUILD)/rel/lib/libearth.a $(INST_LIB)/
	install -m 755 $(BUILD)/pic/lib/$(SO_REAL) $(INST_LIB)/
	ln -sf $(SO_REAL) $(INST_LIB)/$(SO_NAME)
	ln -sf $(SO_NAME) $(INST_LIB)/libearth.so
	install -m 755 $(BUILD)/rel/bin/earthrun $(BUILD)/rel/bin/earthtrace \
	  $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.$(EARTH_MINOR).0|' \
	  -e 's|@LIBS@|$(strip $(LIBS))|' -e 's|@RPATH@|$(INST_RPATH)|' \
	  runtime/earth.pc.in > $(INST_LIB)/pkgconfig/earth.pc
	install -m 644 $(MAN1) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(MAN3) $(DESTDIR)$(PREFIX)/share/man/man3/
	$(if $(MAN7),install -m 644 $(MAN7) $(DESTDIR)$(PREFIX)/share/man/man7/)
	$(INST_LDCONFIG)
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INST_FILES))
# Installs into a temporary prefix, builds a program against it through
# pkg-config (static and shared), uninstalls (tests/install.sh).
test-install:
	$(Q)BUILD=$(BUILD) tests/install.sh
# The docs' shell blocks and complete examples run as written, in a
# temporary home with the project installed there (tests/docs.sh); what
# cannot run on one host is marked in the page and listed.
test-docs: tc $(BUILD)/rel/bin/earthrun $(BUILD)/rel/bin/earthtrace
	$(Q)BUILD=$(BUILD) EARTH_BUILD=$(abspath $(BUILD)) tests/docs.sh
# The PARMACS programs of tests/parmacs, built with their own Makefile
# through earthcc and m4, run on 1-4 nodes once libearth has earth_dsm.h's
# functions (tests/t_parmacs.sh).
.PHONY: test-parmacs
test-parmacs: tc $(BUILD)/rel/bin/earthrun
	$(Q)BUILD=$(BUILD) tests/t_parmacs.sh
# Every man page formats without a warning; every function of earth.h and
# earth_dsm.h has a page (tests/man.sh).
test-man:
	$(Q)tests/man.sh

# Every C and C++ source of the project in the style of the root
# .clang-format (compiler-plugin/ has its own); generated and corpus files
# under tests/tc/ are not sources.
FORMAT_SRC := $(wildcard queues/*.[ch] queues/tests/*.[ch] runtime/*/*.[ch] tests/*.[ch] tests/progs/*.c \
              tests/fuzz/*.c tests/tsan/*.c tests/tsan/criterion/*.h \
              benchmarks/*.[ch] benchmarks/*/*.[ch] threaded-c/examples/*.[ch] \
              threaded-c/runtime/*.c threaded-c/include/*.h \
              compiler-plugin/*.cpp compiler-plugin/*.h)
format:
	clang-format -i $(FORMAT_SRC)
# make test fails on a file clang-format would change (make format fixes it).
test-format: $(DEPS_STAMP)
	$(Q)if clang-format --dry-run --Werror $(FORMAT_SRC) 2>$(BUILD)/format.log; \
	then echo "format: $(words $(FORMAT_SRC)) files as .clang-format says"; \
	else head -n 40 $(BUILD)/format.log; \
	  echo "format: FAILED: these files differ from .clang-format (make format fixes them)" >&2; \
	  exit 1; fi

clean:
	rm -rf $(BUILD)

# The Clang plugin and earthcc, the fuzz targets and the benchmarks in
# folders of their own add their build rules (what test and bench run is
# said above, nowhere else).
-include compiler-plugin/module.mk
-include tests/fuzz/module.mk
-include benchmarks/remote_ops/module.mk
-include benchmarks/remote_load/module.mk
-include benchmarks/apps/module.mk
-include benchmarks/ll7/module.mk
-include benchmarks/dsm_ops/module.mk
-include benchmarks/compare/module.mk
-include benchmarks/smp/module.mk
-include benchmarks/ucx_floor/module.mk
-include benchmarks/tc_dsm/module.mk
-include benchmarks/parmacs/module.mk

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
