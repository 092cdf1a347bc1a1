# benchmarks/remote_load.mk - the remote-load breakdown (remote_load.c)
# links the runtime built with -DEARTH_STAMPS (runtime/core/stamp.h): the
# stamp points compile to nothing in every other build.
$(BUILD)/stamp/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D); $(if $(Q),echo "  CC stmp $<";)
	$(Q)$(CC) $(BASE) $(OPT) -DEARTH_STAMPS $(CFLAGS) -c $< -o $@
$(BUILD)/stamp/lib/libearth.a: $(call objs,stamp,$(LIB_SRC))
	@mkdir -p $(@D); $(if $(Q),echo "  AR      $@";)
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/rel/bench/remote_load: $(call objs,rel,benchmarks/remote_load.c $(BENCH_LIB)) $(BUILD)/stamp/lib/libearth.a
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(CC) $(BASE) $(OPT) $^ $(LIBS) -lm -o $@
