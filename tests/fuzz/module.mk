# tests/fuzz/module.mk - libFuzzer targets; included by the root Makefile.
#
#   fuzz-wire     the tcp message decoder (runtime/net/stream.c + wire.c)
#   fuzz-deliver  handling messages from peers against a node's state
#                 (runtime/su/deliver.c and what it calls)
#   fuzz-hello    the tcp hello and proof exchange, both sides
#                 (runtime/net/tcp_rendezvous.c)
#   fuzz-shm      polling shm rings a hostile local process wrote
#                 (runtime/net/shm.c)
#   fuzz-dsm_diff the page diffs a home applies (runtime/dsm/diff.c)
#   fuzz-dsm_notice the write notices a grant carries (runtime/dsm/notice.c)
#   fuzz-dsm      the shared-memory messages and threads' requests against a
#                 node's state (runtime/su/dsm*.c and runtime/dsm/)
#   fuzz-dsm_fiber the same with fibers' split-phase requests too
#                 (runtime/su/dsm_fiber.c; fuzz_dsm.c built with FUZZ_FIBERS)
#
#   make fuzz-wire              build it, run FUZZ_RUNS inputs (default 20000)
#   make fuzz-wire FUZZ_RUNS=-1 FUZZ_TIME=600   a longer run
#
# Each target names the runtime sources it links. They are built with
# -DEARTH_FATAL_HOOK (base/base.h), so a clean rejection (earth_fatal)
# returns to the harness instead of exiting. A target's corpus starts from
# tests/fuzz/corpus-<target>/ when there is one (crashes found and fixed,
# seeds), and FUZZ_<target>_SEEDS (another target's corpus).
# make test runs the short runs as its last step (test-fuzz); without
# clang-14 it says so and skips them.

FUZZ_CC    := clang-14
FUZZ_DIR   := $(BUILD)/fuzz
FUZZ_RUNS  ?= 20000
FUZZ_TIME  ?= 120
FUZZ_FLAGS := -std=gnu17 -g -O1 -Wall -Wextra -Werror \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -DEARTH_FATAL_HOOK -Iruntime -Iruntime/include -I.

FUZZ_wire_SRC    := runtime/net/stream.c runtime/net/wire.c
FUZZ_wire_LIBS   :=
FUZZ_deliver_SRC := runtime/su/deliver.c runtime/su/remote.c runtime/su/quiet.c runtime/su/slot.c runtime/su/ready.c \
  runtime/su/balance.c runtime/su/coll.c runtime/su/out.c \
  runtime/unit/deque.c runtime/unit/slot.c runtime/gas/registry.c queues/q_ring.c runtime/net/wire.c \
  runtime/net/refuse.c runtime/base/fatal.c runtime/base/acct.c runtime/base/crit.c \
  queues/q_arch.c runtime/base/srctab.c runtime/base/op.c \
  runtime/base/symbols.c runtime/base/settings.c runtime/su/dsm.c runtime/su/dsm_job.c runtime/su/dsm_report.c runtime/su/dsm_fiber.c runtime/dsm/pt.c runtime/dsm/proto.c runtime/dsm/sync.c runtime/dsm/alloc.c \
  runtime/dsm/notice.c runtime/dsm/diff.c runtime/dsm/region.c runtime/dsm/thread.c
FUZZ_deliver_LIBS := -lnuma
FUZZ_hello_SRC   := runtime/net/tcp_rendezvous.c runtime/net/wire.c runtime/net/proof.c
FUZZ_hello_LIBS  := -lsodium
FUZZ_shm_SRC     := runtime/net/shm.c runtime/net/wire.c runtime/base/fatal.c
FUZZ_shm_LIBS    :=
FUZZ_dsm_diff_SRC  := runtime/dsm/diff.c
FUZZ_dsm_diff_LIBS :=
FUZZ_dsm_notice_SRC  := runtime/dsm/notice.c
FUZZ_dsm_notice_LIBS :=
FUZZ_dsm_SRC  := $(FUZZ_deliver_SRC)
FUZZ_dsm_LIBS := -lnuma
FUZZ_dsm_fiber_SRC  := $(FUZZ_deliver_SRC)
FUZZ_dsm_fiber_LIBS := -lnuma
FUZZ_dsm_fiber_SEEDS := tests/fuzz/corpus-dsm
FUZZ_TARGETS := wire deliver hello shm dsm_diff dsm_notice dsm dsm_fiber

# $(1): the target's name (fuzz_$(1).c, make fuzz-$(1)).
define FUZZ_template
$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c $$(FUZZ_$(1)_SRC) \
  $$(wildcard runtime/*/*.h tests/fuzz/*.h)
	@mkdir -p $$(@D); $$(if $$(Q),echo "  LD fuzz $$@";)
	$$(Q)$$(FUZZ_CC) $$(FUZZ_FLAGS) tests/fuzz/fuzz_$(1).c \
	  $$(FUZZ_$(1)_SRC) $$(FUZZ_$(1)_LIBS) -o $$@

.PHONY: fuzz-$(1)
fuzz-$(1): $(FUZZ_DIR)/fuzz_$(1)
	$$(Q)mkdir -p $(FUZZ_DIR)/corpus-$(1)
	$$(Q)$(FUZZ_DIR)/fuzz_$(1) -runs=$$(FUZZ_RUNS) \
	  -max_total_time=$$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	  -seed=1 -use_value_profile=1 -max_len=4096 \
	  -artifact_prefix=$(FUZZ_DIR)/fuzz_$(1)- $(FUZZ_DIR)/corpus-$(1) \
	  $$(wildcard tests/fuzz/corpus-$(1)) $$(FUZZ_$(1)_SEEDS) \
	  > $(FUZZ_DIR)/fuzz_$(1).log 2>&1 \
	  || { tail -n 60 $(FUZZ_DIR)/fuzz_$(1).log; \
	       echo "fuzz: fuzz_$(1) FAILED (log: $(FUZZ_DIR)/fuzz_$(1).log)"; \
	       exit 1; }
	$$(Q)echo "fuzz: fuzz_$(1): $$$$(grep -o 'Done [0-9]* runs' $(FUZZ_DIR)/fuzz_$(1).log), no failure"
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call FUZZ_template,$(t))))
$(FUZZ_DIR)/fuzz_dsm_fiber: tests/fuzz/fuzz_dsm.c

# make test builds the targets with the rest (test-build), where clang is.
ifneq ($(shell command -v $(FUZZ_CC) 2>/dev/null),)
test-build: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
endif

.PHONY: test-fuzz
test-fuzz:
	$(Q)if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(FUZZ_TARGETS:%=fuzz-%); \
	else \
	  echo "fuzz: $(FUZZ_CC) is not installed: skipping the libFuzzer runs" \
	       "($(FUZZ_TARGETS:%=fuzz-%)) (apt-get install clang-14)"; \
	fi

