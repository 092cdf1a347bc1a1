# benchmarks/remote_load/module.mk - the remote-load breakdown, Tables 4
# and 5 (driver.c, the in-job program job.c); included by the root
# Makefile.
#
#   $(BUILD)/rel/bench/remote_load          built by `make`, run by
#                                           `make bench`
#   $(BUILD)/rel/bench/modes_throughput.gp  its plot (gnuplot; without it
#                                           the benchmark says so)
#
# It links the runtime built with -DEARTH_STAMPS (runtime/base/stamp.h):
# the stamp points compile to nothing in every other build.

RL_DIR := benchmarks/remote_load
RL_SRC := $(RL_DIR)/driver.c $(RL_DIR)/job.c

$(call objs,rel,$(RL_SRC)): CFLAGS += -Ibenchmarks

all: $(BUILD)/rel/bench/remote_load $(BUILD)/rel/bench/modes_throughput.gp

$(BUILD)/stamp/obj/%.o: %.c
	@mkdir -p $(@D); $(if $(Q),echo "  CC stmp $<";)
	$(Q)$(CC) $(BASE) $(OPT) -DEARTH_STAMPS $(CFLAGS) -c $< -o $@
$(BUILD)/stamp/lib/libearth.a: $(call objs,stamp,$(LIB_SRC))
	@mkdir -p $(@D); $(if $(Q),echo "  AR      $@";)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/rel/bench/remote_load: $(call objs,rel,$(RL_SRC) $(BENCH_LIB)) $(BUILD)/stamp/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@
$(BUILD)/rel/bench/modes_throughput.gp: $(RL_DIR)/modes_throughput.gp
	@mkdir -p $(@D); cp $< $@
