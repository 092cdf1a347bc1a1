# benchmarks/tc_dsm/module.mk - latency hiding with fibers over shared
# memory (earth_dsm_fiber.h) beside program threads; included by the root
# Makefile.
#
#   $(BUILD)/rel/bench/tc_dsm                   the driver (hide.sh), run by
#                                               `make bench` like every
#                                               program in that folder
#   $(BUILD)/rel/bench/progs/tc_dsm_hide        hide.tc, the fiber version
#                                               (earthcc: built with the
#                                               apps, when the earth_tc
#                                               plugin is there)
#   $(BUILD)/rel/bench/progs/tc_dsm_threads     threads.c, the same with
#                                               program threads (linked as
#                                               earthcc links one)
#   $(BUILD)/rel/bench/tc_dsm_ll7               the LL7 driver (ll7.sh)
#   $(BUILD)/rel/bench/progs/tc_dsm_ll7         ll7_dsm.tc with the LL7
#                                               kernel (benchmarks/ll7),
#                                               built as tc_dsm_hide is
#   $(BUILD)/rel/bench/tc_dsm_hit               the driver of a covered
#                                               access (hit.sh)
#   $(BUILD)/rel/bench/progs/tc_dsm_hit         hit.tc, SHARED data summed
#                                               beside private data, built
#                                               as tc_dsm_hide is
# tests/t_tc_dsm_counts.c runs both and compares their fetches and diffs.

TCD_DIR := benchmarks/tc_dsm
TCD_OUT := $(BUILD)/rel/bench/progs

all: $(BUILD)/rel/bench/tc_dsm $(BUILD)/rel/bench/tc_dsm_ll7 $(TCD_OUT)/tc_dsm_threads \
  $(BUILD)/rel/bench/tc_dsm_hit

$(BUILD)/rel/bench/tc_dsm: $(TCD_DIR)/hide.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@
$(BUILD)/rel/bench/tc_dsm_ll7: $(TCD_DIR)/ll7.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@
$(BUILD)/rel/bench/tc_dsm_hit: $(TCD_DIR)/hit.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@

$(call objs,rel,$(TCD_DIR)/threads.c): CFLAGS += -I$(TCD_DIR)
$(TCD_OUT)/tc_dsm_threads: $(call objs,rel,$(TCD_DIR)/threads.c) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) $(DSM_LD) -o $@

# The fiber version needs the plugin: built with the apps (`make apps`,
# which `make bench` and `make test` run and which skips them all, with a
# message, without clang-14).
apps-build: $(TCD_OUT)/tc_dsm_hide $(TCD_OUT)/tc_dsm_ll7 $(TCD_OUT)/tc_dsm_hit
$(TCD_OUT)/tc_dsm_hide: $(TCD_DIR)/hide.tc $(TCD_DIR)/hide.h $(APPS_HDRS) $(TC_PLUGIN)
	@mkdir -p $(@D); $(if $(Q),echo "  EARTHCC $@";)
	$(Q)EARTH_BUILD=$(abspath $(BUILD)) threaded-c/earthcc -I$(TCD_DIR) -O2 \
	  -Wall -Wextra -Werror $< -o $@

$(TCD_OUT)/tc_dsm_hit: $(TCD_DIR)/hit.tc $(APPS_HDRS) $(TC_PLUGIN)
	@mkdir -p $(@D); $(if $(Q),echo "  EARTHCC $@";)
	$(Q)EARTH_BUILD=$(abspath $(BUILD)) threaded-c/earthcc -O2 \
	  -Wall -Wextra -Werror $< -o $@

# The kernel as benchmarks/ll7 builds it: no FMA contraction.
$(TCD_OUT)/tc_dsm_ll7: $(TCD_DIR)/ll7_dsm.tc benchmarks/ll7/kernel.c benchmarks/ll7/kernel.h $(APPS_HDRS) $(TC_PLUGIN)
	@mkdir -p $(@D); $(if $(Q),echo "  EARTHCC $@";)
	$(Q)EARTH_BUILD=$(abspath $(BUILD)) threaded-c/earthcc -Ibenchmarks/ll7 -O2 \
	  -ffp-contract=off -Wall -Wextra -Werror $< benchmarks/ll7/kernel.c -o $@

$(BUILD)/asan/tests/t_tc_dsm_counts: | $(TCD_OUT)/tc_dsm_threads $(BUILD)/rel/bin/earthrun
$(BUILD)/asan/obj/tests/t_tc_dsm_counts.o: CFLAGS += -I$(TCD_DIR) \
  -DT_TCD_HIDE='"$(TCD_OUT)/tc_dsm_hide"' \
  -DT_TCD_THREADS='"$(TCD_OUT)/tc_dsm_threads"' \
  -DT_EARTHRUN='"$(BUILD)/rel/bin/earthrun"'
