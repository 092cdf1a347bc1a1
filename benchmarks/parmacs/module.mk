# benchmarks/parmacs/module.mk - the PARMACS programs of tests/parmacs on
# shared-memory nodes against the same sources on POSIX threads; included
# by the root Makefile.
#
#   $(BUILD)/rel/bench/parmacs                  the driver (run.sh), run by
#                                               `make bench` like every
#                                               program in that folder
#   $(BUILD)/rel/bench/progs/parmacs-dsm/PROG   m4 with earth_parmacs.m4,
#                                               then earthcc (built with the
#                                               apps: earthcc needs clang-14)
#   $(BUILD)/rel/bench/progs/parmacs-pth/PROG   m4 with pthreads.m4, then cc

PMB_DIR := benchmarks/parmacs
PMB_OUT := $(BUILD)/rel/bench/progs
PMB_PROGS := jacobi matmul lu transpose lockacc pipeline
PMB_CFLAGS := -pthread -std=c11 -D_XOPEN_SOURCE=500 -O2 -Wall -Wextra -Werror

all: $(BUILD)/rel/bench/parmacs $(PMB_PROGS:%=$(PMB_OUT)/parmacs-pth/%)
apps-build: $(PMB_PROGS:%=$(PMB_OUT)/parmacs-dsm/%)

$(BUILD)/rel/bench/parmacs: $(PMB_DIR)/run.sh
	@mkdir -p $(@D); cp $< $@ && chmod +x $@

$(PMB_OUT)/parmacs-pth/%: tests/parmacs/%.c.in $(PMB_DIR)/pthreads.m4
	@mkdir -p $(@D); $(if $(Q),echo "  PARMACS $@";)
	$(Q)m4 $(PMB_DIR)/pthreads.m4 $< > $@.c
	$(Q)$(CC) $(PMB_CFLAGS) $@.c -o $@ -lm

$(PMB_OUT)/parmacs-dsm/%: tests/parmacs/%.c.in runtime/earth_parmacs.m4 \
  $(BUILD)/rel/lib/libearth.a $(TC_PLUGIN)
	@mkdir -p $(@D); $(if $(Q),echo "  PARMACS $@";)
	$(Q)m4 runtime/earth_parmacs.m4 $< > $@.c
	$(Q)EARTH_BUILD=$(abspath $(BUILD)) threaded-c/earthcc $(PMB_CFLAGS) \
	  $@.c -o $@ -lm
