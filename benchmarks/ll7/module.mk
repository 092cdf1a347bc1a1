# benchmarks/ll7/module.mk - the Livermore Loop 7 latency-hiding benchmark
# (Figure 3 of the EARTH-MANNA paper); included by the root Makefile.
#
#   $(BUILD)/rel/bench/ll7   built by `make`, run by `make bench`
#                            (benchmarks/run.sh runs every binary there)
#   $(BUILD)/asan/ll7/ll7    the same under ASan+UBSan, run by tests/t_ll7.c
#                            and tests/t_netemu.c
#
# The plots need gnuplot (Debian gnuplot-nox, installed by `make deps`);
# without it the benchmark still runs and says so.

LL7_DIR  := benchmarks/ll7
LL7_SRC  := $(LL7_DIR)/ll7.c $(LL7_DIR)/job.c $(LL7_DIR)/result.c \
            $(LL7_DIR)/kernel.c $(BENCH_LIB)

# Bit-for-bit results: no FMA contraction in the kernel.
$(BUILD)/%/obj/$(LL7_DIR)/kernel.o: CFLAGS += -ffp-contract=off
$(call objs,rel,$(LL7_SRC)) $(call objs,asan,$(LL7_SRC)): CFLAGS += -Ibenchmarks -I$(LL7_DIR)

all: $(BUILD)/rel/bench/ll7 $(BUILD)/rel/bench/ll7.gp

$(BUILD)/rel/bench/ll7: $(call objs,rel,$(LL7_SRC)) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@
$(BUILD)/rel/bench/ll7.gp: $(LL7_DIR)/ll7.gp
	@mkdir -p $(@D); cp $< $@
$(BUILD)/asan/ll7/ll7: $(call objs,asan,$(LL7_SRC)) $(BUILD)/asan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD asan $@";)
	$(Q)$(CC) $(BASE) $(ASAN) $^ $(LIBS) -lm -o $@
$(BUILD)/asan/ll7/ll7.gp: $(LL7_DIR)/ll7.gp
	@mkdir -p $(@D); cp $< $@

# The tests run the ASan build as 2-node jobs; t_ll7 also links the kernel
# and the percentages (result.c, with the harness's median).
$(BUILD)/asan/tests/t_ll7: $(BUILD)/asan/obj/$(LL7_DIR)/kernel.o \
    $(BUILD)/asan/obj/$(LL7_DIR)/result.o $(call objs,asan,$(BENCH_LIB))
$(BUILD)/asan/tests/t_ll7: LIBS += -lm
$(BUILD)/asan/tests/t_ll7 $(BUILD)/asan/tests/t_netemu: | $(BUILD)/asan/ll7/ll7 \
    $(BUILD)/rel/bin/earthrun $(BUILD)/asan/progs/multinode
$(BUILD)/asan/obj/tests/t_ll7.o $(BUILD)/asan/obj/tests/t_netemu.o: CFLAGS += \
    -I$(LL7_DIR) -DT_LL7='"$(BUILD)/asan/ll7/ll7"' \
    -DT_PROG_DIR='"$(BUILD)/asan/progs"' -DT_EARTHRUN='"$(BUILD)/rel/bin/earthrun"'
