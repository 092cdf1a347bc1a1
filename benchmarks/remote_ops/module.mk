# benchmarks/remote_ops/module.mk - Table 1 over shm and tcp, the remote
# operations against their floors, TOKEN balancing; included by the root
# Makefile.
#
#   $(BUILD)/rel/bench/remote_ops   built by `make`, run by `make bench`:
#                                   driver.c, which starts itself as 2-node
#                                   jobs whose nodes run job.c

RO_DIR := benchmarks/remote_ops
RO_SRC := $(RO_DIR)/driver.c $(RO_DIR)/job.c

$(call objs,rel,$(RO_SRC)): CFLAGS += -Ibenchmarks

all: $(BUILD)/rel/bench/remote_ops

$(BUILD)/rel/bench/remote_ops: $(call objs,rel,$(RO_SRC) $(BENCH_LIB) $(EXAMPLE_TF)) $(BUILD)/rel/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@
