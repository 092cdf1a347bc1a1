# compiler-plugin/module.mk - the earth_tc Clang plugin, the Threaded-C
# counters library and earthcc; included by the root Makefile.
#
#   make tc            plugin + libearth_tc.a (skips the plugin, with a
#                      message, when clang-14 development files are missing)
#   make tc-tsan, tc-asan  tc and the tsan (asan) libearth_tc.a and
#                      libearth.a, for earthcc's EARTHCC_SANITIZE=thread (address)
#   make install-tc    earthcc, threadedc.h, libearth_tc.a, the plugin
#   make bench-tc      Table 3 counters: threaded-c/bench/table3.sh
#
# Clang/LLVM is pinned to major version 14 (Debian 12's default): a plugin
# built against another major version crashes the clang that loads it.

TC_LLVM_VER    := 14
TC_CLANG       := clang-$(TC_LLVM_VER)
TC_LLVM_CONFIG := llvm-config-$(TC_LLVM_VER)
TC_CXX         := clang++-$(TC_LLVM_VER)
TC_DEB_PKGS    := clang-$(TC_LLVM_VER) llvm-$(TC_LLVM_VER)-dev libclang-$(TC_LLVM_VER)-dev
TC_PLUGIN      := $(BUILD)/plugin/earth_tc.so
TC_PLUGIN_SRC  := $(wildcard compiler-plugin/*.cpp)
TC_PLUGIN_OBJ  := $(patsubst compiler-plugin/%.cpp,$(BUILD)/plugin/obj/%.o,$(TC_PLUGIN_SRC))
TC_LIB         := $(BUILD)/rel/lib/libearth_tc.a
TC_LIB_SRC     := threaded-c/runtime/tc_stats.c threaded-c/runtime/tc_dsm.c
# Evaluated only when the plugin is built (llvm-config may be missing).
TC_CXXFLAGS     = $(shell $(TC_LLVM_CONFIG) --cxxflags) -std=c++17 -fPIC -O1 \
                  -Wall -Wextra -Werror -Wno-unused-parameter -MMD -MP
TC_HAVE_CLANG   = command -v $(TC_CLANG) >/dev/null 2>&1 && \
                  command -v $(TC_LLVM_CONFIG) >/dev/null 2>&1 && \
                  [ -f "$$($(TC_LLVM_CONFIG) --includedir)/clang/AST/ASTConsumer.h" ]

.PHONY: tc tc-plugin install-tc install-tc-pc uninstall-tc bench-tc
# The project's version (VERSION at the top): earthcc --version, earth-tc.pc.
TC_VERSION := $(strip $(file <VERSION))

tc: $(TC_LIB) $(BUILD)/rel/lib/libearth.a $(BUILD)/rel/lib/earth.libs
	$(Q)if $(TC_HAVE_CLANG); then \
	  $(MAKE) --no-print-directory tc-plugin; \
	else \
	  echo "tc: $(TC_CLANG) with its development files is not installed:" \
	       "the earth_tc plugin is not built and the Threaded-C tests will be" \
	       "skipped (install: apt-get install $(TC_DEB_PKGS))"; \
	fi

tc-plugin: $(TC_PLUGIN)

$(BUILD)/plugin/obj/%.o: compiler-plugin/%.cpp $(wildcard compiler-plugin/*.h)
	@mkdir -p $(@D); $(if $(Q),echo "  CXX     $<";)
	$(Q)$(TC_CXX) $(TC_CXXFLAGS) -c $< -o $@

$(TC_PLUGIN): $(TC_PLUGIN_OBJ)
	@mkdir -p $(@D); $(if $(Q),echo "  LD      $@";)
	$(Q)$(TC_CXX) -shared -fPIC $^ -o $@

# The sanitized flavours, from the same sources with the flavour's flags,
# beside that flavour's libearth.a: what EARTHCC_SANITIZE=thread (address)
# links (make tc-tsan, tc-asan; the TSan tests build them first).
TC_LIB_TSAN    := $(BUILD)/tsan/lib/libearth_tc.a
TC_LIB_ASAN    := $(BUILD)/asan/lib/libearth_tc.a
$(TC_LIB): $(call objs,rel,$(TC_LIB_SRC))
$(TC_LIB_TSAN): $(call objs,tsan,$(TC_LIB_SRC))
$(TC_LIB_ASAN): $(call objs,asan,$(TC_LIB_SRC))
$(TC_LIB) $(TC_LIB_TSAN) $(TC_LIB_ASAN):
	@mkdir -p $(@D); $(if $(Q),echo "  AR      $@";)
	$(Q)rm -f $@ && ar rcs $@ $^

# tc_stats.c includes tc_stats.h from threaded-c/include.
$(foreach v,rel tsan asan,$(call objs,$(v),$(TC_LIB_SRC))): CFLAGS += -Ithreaded-c/include

# earthcc's EARTHCC_SANITIZE=thread (address): the plugin and the
# flavour's two libraries (and earth.libs, read from rel/lib).
.PHONY: tc-tsan tc-asan
tc-tsan: tc $(TC_LIB_TSAN) $(BUILD)/tsan/lib/libearth.a
tc-asan: tc $(TC_LIB_ASAN) $(BUILD)/asan/lib/libearth.a

all: tc

# What install-tc puts under $(PREFIX); uninstall-tc removes exactly that
# (the plugin's folder too when it is left empty).
TC_INST_FILES := $(PREFIX)/bin/earthcc $(PREFIX)/include/threadedc.h \
                 $(PREFIX)/include/tc_stats.h $(PREFIX)/lib/libearth_tc.a \
                 $(PREFIX)/lib/earth/earth_tc.so \
                 $(PREFIX)/lib/pkgconfig/earth-tc.pc \
                 $(PREFIX)/share/earth/earth_dsm.ld \
                 $(PREFIX)/share/earth/earth_parmacs.m4
install: install-tc
uninstall: uninstall-tc
install-tc: tc install-tc-pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib
	sed -e 's|@EARTH_VERSION@|$(TC_VERSION)|' -e 's|@EARTH_LIBS@|$(strip $(LIBS))|' threaded-c/earthcc \
	  > $(DESTDIR)$(PREFIX)/bin/earthcc
	chmod 755 $(DESTDIR)$(PREFIX)/bin/earthcc
	install -m 644 threaded-c/include/threadedc.h threaded-c/include/tc_stats.h \
	  $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(TC_LIB) $(DESTDIR)$(PREFIX)/lib/
	install -d $(DESTDIR)$(PREFIX)/share/earth
	install -m 644 runtime/earth_dsm.ld runtime/earth_parmacs.m4 \
	  $(DESTDIR)$(PREFIX)/share/earth/
	$(Q)if [ -f $(TC_PLUGIN) ]; then \
	  install -d $(DESTDIR)$(PREFIX)/lib/earth && \
	  install -m 644 $(TC_PLUGIN) $(DESTDIR)$(PREFIX)/lib/earth/; \
	else echo "install-tc: no plugin built; earthcc will compile plain C only"; fi
# pkg-config --cflags --libs earth-tc: C against threadedc.h without earthcc.
install-tc-pc:
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(TC_VERSION)|' \
	  -e 's|@LIBS@|$(strip $(LIBS))|' -e 's|@RPATH@|$(INST_RPATH)|' \
	  threaded-c/earth-tc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/earth-tc.pc
uninstall-tc:
	rm -f $(addprefix $(DESTDIR),$(TC_INST_FILES))
	$(Q)rmdir $(DESTDIR)$(PREFIX)/lib/earth 2>/dev/null || true
	$(Q)rmdir $(DESTDIR)$(PREFIX)/share/earth 2>/dev/null || true

# table3.sh finds the plugin and the libraries through EARTH_BUILD.
bench-tc: export EARTH_BUILD := $(abspath $(BUILD))
bench-tc: tc
	$(Q)threaded-c/bench/table3.sh

-include $(wildcard $(BUILD)/plugin/obj/*.d)
