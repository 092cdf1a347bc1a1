# benchmarks/smp/module.mk - a node of k EUs against oneTBB, and what one
# SU serves; included by the root Makefile.
#
#   $(BUILD)/rel/bench/smp          the driver (smp.sh), run by `make bench`
#                                   like every program in that folder; it
#                                   runs the compare/ programs (earth_tasks,
#                                   earth_uts, tbb_tasks, tbb_uts) at each k
#   $(BUILD)/rel/smp/su_capacity    remote requests one SU serves per second

SMP_DIR := benchmarks/smp
SMP_OUT := $(BUILD)/rel/smp

all: $(SMP_OUT)/su_capacity $(BUILD)/rel/bench/smp

$(call objs,rel,$(SMP_DIR)/su_capacity.c): CFLAGS += -Ibenchmarks
$(SMP_OUT)/su_capacity: $(call objs,rel,$(SMP_DIR)/su_capacity.c benchmarks/bench.c) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@

$(BUILD)/rel/bench/smp: $(SMP_DIR)/smp.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@
