# benchmarks/compare/module.mk - side-by-side comparisons in the same run
# (oneTBB, Open MPI); included by the root Makefile.
#
#   $(BUILD)/rel/bench/compare     the driver (compare.sh), run by `make
#                                  bench` like every program in that folder
#   $(BUILD)/rel/compare/          earth_tasks, earth_remote, earth_uts
#                                  (built by `make`), tbb_tasks, tbb_uts,
#                                  mpi_ll7 (built by `make bench` when oneTBB
#                                  and Open MPI are there); Open MPI's remote
#                                  access is timed by ../ucx_floor/mpi_floor
#   $(BUILD)/{asan,tsan}/progs/uts earth_uts for the job test t_uts
#
# UTS hashes with OpenSSL's libcrypto (libssl-dev, in DEB_PKGS).
# oneTBB and Open MPI (libtbb-dev, libopenmpi-dev, openmpi-bin) come from
# `make deps`; where they are missing compare.sh skips the part it cannot
# run and says which package is missing.

CMP_DIR  := benchmarks/compare
CMP_OUT  := $(BUILD)/rel/compare
CMP_EARTH := $(CMP_OUT)/earth_tasks $(CMP_OUT)/earth_remote $(CMP_OUT)/earth_uts

.PHONY: compare-extra
all: $(CMP_EARTH) $(BUILD)/rel/bench/compare

$(call objs,rel,$(CMP_DIR)/earth_tasks.c $(CMP_DIR)/earth_remote.c): CFLAGS += -Ibenchmarks
$(CMP_OUT)/%: $(call objs,rel,$(CMP_DIR)/%.c benchmarks/bench.c $(EXAMPLE_TF)) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@

$(CMP_OUT)/earth_uts: LIBS += -lcrypto

# The same program for the job test t_uts, per variant.
$(BUILD)/asan/progs/uts: $(call objs,asan,$(CMP_DIR)/earth_uts.c) $(BUILD)/asan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD asan $@";)
	$(Q)$(CC) $(BASE) $(ASAN) $^ $(LIBS) -lcrypto -lm -o $@
$(BUILD)/tsan/progs/uts: $(call objs,tsan,$(CMP_DIR)/earth_uts.c) $(BUILD)/tsan/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD tsan $@";)
	$(Q)$(CC) $(BASE) $(TSAN) $^ $(LIBS) -lcrypto -lm -o $@
$(BUILD)/asan/tests/t_uts: | $(BUILD)/asan/progs/uts
$(BUILD)/tsan/tests/t_uts: | $(BUILD)/tsan/progs/uts

$(BUILD)/rel/bench/compare: $(CMP_DIR)/compare.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@

# The other side: built only where its compiler and headers are.
$(CMP_OUT)/tbb_tasks: $(CMP_DIR)/tbb_tasks.cpp
	@mkdir -p $(@D); $(if $(Q),echo "  CXX     $@";)
	$(Q)g++ -std=c++17 -O2 -g -Wall -Wextra -Werror $< -ltbb -o $@
$(CMP_OUT)/tbb_uts: $(CMP_DIR)/tbb_uts.cpp $(CMP_DIR)/uts.h
	@mkdir -p $(@D); $(if $(Q),echo "  CXX     $@";)
	$(Q)g++ -std=c++17 -O2 -g -Wall -Wextra -Werror $< -ltbb -lcrypto -o $@
$(CMP_OUT)/mpi_ll7: $(CMP_DIR)/mpi_ll7.c $(LL7_DIR)/kernel.c $(LL7_DIR)/kernel.h
	@mkdir -p $(@D); $(if $(Q),echo "  MPICC   $@";)
	$(Q)mpicc $(CSTD) $(WARN) -O2 -g -ffp-contract=off -I$(LL7_DIR) \
	  $(CMP_DIR)/mpi_ll7.c $(LL7_DIR)/kernel.c -lm -o $@

compare-extra:
	$(Q)if command -v g++ >/dev/null 2>&1 && \
	    [ -f /usr/include/oneapi/tbb/task_group.h ]; then \
	  $(MAKE) --no-print-directory $(CMP_OUT)/tbb_tasks $(CMP_OUT)/tbb_uts; \
	else echo "compare: oneTBB (libtbb-dev) or g++ missing: TBB part skipped"; fi
	$(Q)if command -v mpicc >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(UF_OUT)/mpi_floor $(CMP_OUT)/mpi_ll7 \
	    $(BUILD)/rel/bench/progs/mpi_jacobi; \
	else echo "compare: Open MPI (libopenmpi-dev) missing: MPI part skipped"; fi
