# tests/fuzz/module.mk - libFuzzer target for the tcp message decoder
# (runtime/net/stream.c + wire.c); included by the root Makefile.
#
#   make fuzz-wire              build it, run FUZZ_RUNS inputs (default 20000)
#   make fuzz-wire FUZZ_RUNS=-1 FUZZ_TIME=600   a longer run
#
# make test runs the short run first; without clang-14 it says so and
# skips it.

FUZZ_CC    := clang-14
FUZZ_DIR   := $(BUILD)/fuzz
FUZZ_BIN   := $(FUZZ_DIR)/fuzz_wire
FUZZ_SRC   := tests/fuzz/fuzz_wire.c runtime/net/stream.c runtime/net/wire.c
FUZZ_RUNS  ?= 20000
FUZZ_TIME  ?= 120

.PHONY: fuzz-wire test-fuzz

$(FUZZ_BIN): $(FUZZ_SRC) runtime/net/stream.h runtime/net/wire.h
	@mkdir -p $(@D); $(if $(Q),echo "  LD fuzz $@";)
	$(Q)$(FUZZ_CC) -std=gnu17 -g -O1 -Wall -Wextra -Werror \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -Iruntime $(FUZZ_SRC) -o $@

fuzz-wire: $(FUZZ_BIN)
	$(Q)mkdir -p $(FUZZ_DIR)/corpus
	$(Q)$(FUZZ_BIN) -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_TIME) \
	  -seed=1 -use_value_profile=1 -max_len=4096 \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus \
	  > $(FUZZ_DIR)/fuzz_wire.log 2>&1 \
	  || { tail -n 60 $(FUZZ_DIR)/fuzz_wire.log; \
	       echo "fuzz: fuzz_wire FAILED (log: $(FUZZ_DIR)/fuzz_wire.log)"; exit 1; }
	$(Q)echo "fuzz: fuzz_wire: $$(grep -o 'Done [0-9]* runs' $(FUZZ_DIR)/fuzz_wire.log), no failure"

test-fuzz:
	$(Q)if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory fuzz-wire; \
	else \
	  echo "fuzz: $(FUZZ_CC) is not installed: skipping the libFuzzer run" \
	       "of the message decoder (apt-get install clang-14)"; \
	fi

test: test-fuzz
