# benchmarks/dsm_ops/module.mk - shared memory across nodes (earth_dsm.h)
# on 2 nodes over shm, tcp and ucx against floors of the same run, the
# Jacobi against pthreads, latency hiding; included by the root Makefile.
#
#   $(BUILD)/rel/bench/dsm_ops              built by `make`, run by `make
#                                           bench`: driver.c, which runs
#                                           the program below (and itself,
#                                           for the GET floor) as 2-node
#                                           jobs, and dsm_fault for the
#                                           kernel's floor
#   $(BUILD)/rel/bench/progs/dsm_ops_prog   prog.c, the shared-memory
#                                           program (linked as earthcc
#                                           links one: earth_dsm.ld)
#   $(BUILD)/rel/bench/progs/mpi_jacobi     mpi_jacobi.c, the Jacobi in
#                                           Open MPI (built with the other
#                                           MPI programs by compare-extra,
#                                           where mpicc is)

DO_DIR := benchmarks/dsm_ops
DO_SRC := $(DO_DIR)/driver.c

$(call objs,rel,$(DO_SRC) $(DO_DIR)/prog.c): CFLAGS += -Ibenchmarks -I$(DO_DIR)

all: $(BUILD)/rel/bench/dsm_ops $(BUILD)/rel/bench/progs/dsm_ops_prog

$(BUILD)/rel/bench/dsm_ops: $(call objs,rel,$(DO_SRC) $(BENCH_LIB)) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@
$(BUILD)/rel/bench/dsm_ops: | $(BUILD)/rel/bench/progs/dsm_ops_prog $(BUILD)/rel/bench/dsm_fault
$(BUILD)/rel/bench/progs/dsm_ops_prog: $(call objs,rel,$(DO_DIR)/prog.c) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) $(DSM_LD) -o $@

# tests/t_dsm_ops.c runs the program built under ASan+UBSan.
$(BUILD)/asan/dsm_ops/dsm_ops_prog: $(call objs,asan,$(DO_DIR)/prog.c) $(BUILD)/asan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD asan $@";)
	$(Q)$(CC) $(BASE) $(ASAN) $^ $(LIBS) $(DSM_LD) -o $@
$(call objs,asan,$(DO_DIR)/prog.c): CFLAGS += -I$(DO_DIR)
$(BUILD)/asan/tests/t_dsm_ops: | $(BUILD)/asan/dsm_ops/dsm_ops_prog $(BUILD)/rel/bin/earthrun
$(BUILD)/asan/obj/tests/t_dsm_ops.o: CFLAGS += -I$(DO_DIR) \
    -DT_DSM_OPS_PROG='"$(BUILD)/asan/dsm_ops/dsm_ops_prog"' -DT_EARTHRUN='"$(BUILD)/rel/bin/earthrun"'

$(BUILD)/rel/bench/progs/mpi_jacobi: $(DO_DIR)/mpi_jacobi.c $(DO_DIR)/jacobi.h
	@mkdir -p $(@D); $(if $(Q),echo "  MPICC   $@";)
	$(Q)mpicc $(CSTD) $(WARN) -O2 -g -ffp-contract=off -I$(DO_DIR) $< -o $@
