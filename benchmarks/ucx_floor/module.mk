# benchmarks/ucx_floor/module.mk - the raw floors of the ucx transport's
# figures (UCP and Open MPI over the same media, in the same run);
# included by the root Makefile.
#
#   $(BUILD)/rel/bench/ucx_floor   the driver (ucx_floor.sh), run by `make
#                                  bench` like every program in that folder
#   $(BUILD)/rel/ucx_floor/        ucp_floor (built by `make`; UCX from
#                                  `make deps`), mpi_floor (built by `make
#                                  bench` where Open MPI is; compare.sh's
#                                  Open MPI remote access too)

UF_DIR := benchmarks/ucx_floor
UF_OUT := $(BUILD)/rel/ucx_floor
UF_SRC := $(UF_DIR)/ucp_floor.c $(UF_DIR)/ucp_pair.c

all: $(UF_OUT)/ucp_floor $(BUILD)/rel/bench/ucx_floor

$(call objs,rel,$(UF_SRC)): CFLAGS += -Ibenchmarks
$(UF_OUT)/ucp_floor: $(call objs,rel,$(UF_SRC) benchmarks/bench.c) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lucp -lucs -lm -o $@

$(BUILD)/rel/bench/ucx_floor: $(UF_DIR)/ucx_floor.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@

# The Open MPI side: built only where mpicc is.
$(UF_OUT)/mpi_floor: $(UF_DIR)/mpi_floor.c
	@mkdir -p $(@D); $(if $(Q),echo "  MPICC   $@";)
	$(Q)mpicc $(CSTD) $(WARN) -O2 -g $< -o $@

.PHONY: ucx-floor-extra
ucx-floor-extra:
	$(Q)if command -v mpicc >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(UF_OUT)/mpi_floor; \
	else echo "ucx_floor: Open MPI (libopenmpi-dev) missing: MPI floors skipped"; fi

# Its test (tests/t_ucx_floor.c) runs the driver at tiny sizes: the
# programs first, mpi_floor where mpicc is.
$(BUILD)/asan/obj/tests/t_ucx_floor.o: CFLAGS += -DT_UCX_FLOOR_DIR='"$(UF_OUT)"' \
  -DT_UCX_FLOOR_DRIVER='"$(BUILD)/rel/bench/ucx_floor"'
$(BUILD)/asan/tests/t_ucx_floor: | $(UF_OUT)/ucp_floor $(BUILD)/rel/bench/ucx_floor \
  $(if $(shell command -v mpicc 2>/dev/null),$(UF_OUT)/mpi_floor)
