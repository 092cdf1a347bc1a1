# benchmarks/apps/module.mk - the EARTH benchmark programs in Threaded-C
# and their sequential C twins; included by the root Makefile.
#
#   make apps         every program into $(BUILD)/rel/apps/: PROG (earthcc,
#                     minimal save sets), PROG.all (earthcc --save-all, for
#                     the Table 3 counters) and PROG_seq (plain C)
#   make apps-bench   benchmarks/apps/run_apps.sh alone (QUICK=1: a short
#                     run); `make bench` runs it among the others
#
# Without clang-14 and the earth_tc plugin (make tc) the programs are
# skipped with a message, as the other Threaded-C parts are. earthcc finds
# the plugin and libearth in $(BUILD) through EARTH_BUILD.

APPS_NAMES := fib nqueens paraffins pfold tomcatv ray jacobi matmul quad exptree uts
APPS_DIR   := benchmarks/apps
APPS_OUT   := $(BUILD)/rel/apps
APPS_BINS  := $(foreach p,$(APPS_NAMES),$(APPS_OUT)/$(p) $(APPS_OUT)/$(p).all \
                $(APPS_OUT)/$(p)_seq)
# The same floating-point operations in the same order in both versions:
# no FMA contraction, so results compare bit for bit.
APPS_FP    := -O2 -ffp-contract=off
APPS_TCC   := EARTH_BUILD=$(abspath $(BUILD)) threaded-c/earthcc -I$(APPS_DIR)
APPS_HDRS  := $(APPS_DIR)/apps.h $(TC_LIB) $(BUILD)/rel/lib/libearth.a \
              threaded-c/include/threadedc.h runtime/include/earth.h

.PHONY: apps apps-build apps-bench

apps: tc $(BUILD)/rel/bin/earthrun
	$(Q)if command -v $(TC_CLANG) >/dev/null 2>&1 && [ -f $(TC_PLUGIN) ]; then \
	  $(MAKE) --no-print-directory apps-build; \
	else \
	  echo "apps: $(TC_CLANG) or the earth_tc plugin ($(TC_PLUGIN)) is" \
	       "missing: the benchmark programs are skipped (make tc)"; \
	fi

apps-build: $(APPS_BINS)

$(APPS_OUT)/%_seq: $(APPS_DIR)/%_seq.c $(APPS_DIR)/%.h $(APPS_DIR)/apps.h
	@mkdir -p $(@D); $(if $(Q),echo "  CC      $@";)
	$(Q)$(CC) $(CSTD) $(WARN) $(APPS_FP) -g $< -lm $(APPS_LIBS) -o $@

$(APPS_OUT)/%.all: $(APPS_DIR)/%.tc $(APPS_DIR)/%.h $(APPS_HDRS) $(TC_PLUGIN)
	@mkdir -p $(@D); $(if $(Q),echo "  EARTHCC $@";)
	$(Q)$(APPS_TCC) $(APPS_FP) -Wall -Wextra -Werror --save-all $< $(APPS_LIBS) -o $@

$(APPS_OUT)/%: $(APPS_DIR)/%.tc $(APPS_DIR)/%.h $(APPS_HDRS) $(TC_PLUGIN)
	@mkdir -p $(@D); $(if $(Q),echo "  EARTHCC $@";)
	$(Q)$(APPS_TCC) $(APPS_FP) -Wall -Wextra -Werror $< $(APPS_LIBS) -o $@

# UTS hashes with libcrypto; its trees are those of benchmarks/compare.
$(addprefix $(APPS_OUT)/,uts uts.all uts_seq): APPS_LIBS := -lcrypto
$(addprefix $(APPS_OUT)/,uts uts.all uts_seq): benchmarks/compare/uts.h

apps-bench: apps
	$(Q)QUICK=$(QUICK) BUILD=$(BUILD) $(if $(RESULTS_DIR),RESULTS_DIR=$(RESULTS_DIR) )$(APPS_DIR)/run_apps.sh

# tests/t_apps.c runs the programs (rel builds) under earthrun.
$(BUILD)/asan/obj/tests/t_apps.o: CFLAGS += -DT_APPS_DIR='"$(APPS_OUT)"' \
  -DT_APPS_EARTHRUN='"$(BUILD)/rel/bin/earthrun"' -DT_APPS_BUILD='"$(BUILD)"'
