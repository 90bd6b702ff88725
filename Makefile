# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# mnc - Minimum-Necessary Communication for LLM-agent hosts.
#
#   make deps          install every Debian package (root; bookworm-backports for libbpf/bpftool)
#   make all           (the default) libmnc, BPF objects and skeletons, mncctl, mncd, mnc-mcp, man pages
#   make man           the man pages (docs/man/*.scd -> build/man, scdoc)
#   make attacks       the attack corpus, one binary per attack (tests/attacks/README.md)
#   make tests         build every test program (unit tests, attacks) without running them
#   make demo          the paper's worked example on the embedded default policy
#   make test          build and run every test; ends with the ten slowest and "N passed, N failed, N skipped"
#   make unit          build and run the unit tests only
#   make vmtest        the BPF-LSM backend and the attack corpus in a qemu guest (make test runs it: test_vm)
#   make asan          unit tests, then mncd/mncctl in 3 integration tests, under ASan + UBSan
#   make valgrind      unit tests under valgrind (leaks and memory errors fail)
#   make bench         benchmarks (figures printed, compared in the same run)
#   make fuzz          bounded libFuzzer runs (request parser, policy loader, disclosure JSON)
#   make eval          the paper's tables on CalBench/AgentLeak (docs/eval.md)
#   make eval-check    fail if docs/eval.md's tables were not made from the current sources
#   make format        format every C source with .clang-format (test_layout checks it)
#   make check-commits commit messages after .ci/commit-base are in the format of HACKING.md
#   make install       binaries, library, headers, policies, docs, man pages under $(DESTDIR)/usr/local
#   make clean         remove build/ and build-asan/
#   make help          this list
#
# Sources are picked up by directory, so adding a module never needs a Makefile edit:
#   user/lib/*.c -> libmnc     loader/*.c -> libmncload    bpf/*.bpf.c -> BPF objects + skeletons
#   user/mncctl/*.c -> mncctl  user/mncd/*.c -> mncd       tests/unit/test_*.c -> one binary each
#   user/mnc-mcp/*.c -> mnc-mcp (the MCP server, docs/mcp.md)
#   tests/bench/bench_*.c -> one benchmark binary each

BUILD    ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
SAN      ?=
VERSION  := 0.1.0

PKGS     := libcjson libcrypto libisal libbpf libelf libseccomp libpq
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN     := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wno-format-nonliteral
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 $(WARN) -fPIC -D_GNU_SOURCE -D_FORTIFY_SOURCE=2 -fstack-protector-strong
CPPFLAGS += -Iuser/include -Iuser/lib -Ibpf -Iloader -I$(BUILD)/include $(PKG_CFLAGS)
LDLIBS   += $(PKG_LIBS) -lm -lpthread

ifeq ($(SAN),1)
  CFLAGS  := $(filter-out -D_FORTIFY_SOURCE=2,$(CFLAGS)) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined
endif

LIB_SRC    := $(sort $(wildcard user/lib/*.c))
LOADER_SRC := $(sort $(wildcard loader/*.c))
CTL_SRC    := $(sort $(wildcard user/mncctl/*.c))
MNCD_SRC   := $(sort $(wildcard user/mncd/*.c user/mncd/monitor/*.c user/mncd/enforcer/*.c))
MCP_SRC    := $(sort $(wildcard user/mnc-mcp/*.c))
BPF_SRC    := $(sort $(wildcard bpf/*.bpf.c))
TEST_SRC   := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC  := $(sort $(wildcard tests/bench/bench_*.c))
HEADERS    := $(wildcard user/include/mnc/*.h bpf/*.h loader/*.h user/mncctl/*.h user/mncd/*.h user/mncd/*/*.h \
	user/mnc-mcp/*.h tests/unit/*.h)

LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
LOADER_OBJ := $(LOADER_SRC:%.c=$(BUILD)/obj/%.o)
CTL_OBJ    := $(CTL_SRC:%.c=$(BUILD)/obj/%.o)
MNCD_OBJ   := $(MNCD_SRC:%.c=$(BUILD)/obj/%.o)
MCP_OBJ    := $(MCP_SRC:%.c=$(BUILD)/obj/%.o)
BPF_OBJ    := $(BPF_SRC:bpf/%.bpf.c=$(BUILD)/bpf/%.bpf.o)
SKELS      := $(BPF_SRC:bpf/%.bpf.c=$(BUILD)/include/%.skel.h)
TESTS      := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCHES    := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
# the attack corpus (tests/attacks/README.md): one binary per attack, libc only; its harness
# is atk.c and the atkv_*.c modules (one class of channel each)
ATK_SRC    := tests/attacks/atk.c $(sort $(wildcard tests/attacks/atkv_*.c))
ATTACKS    := $(patsubst tests/attacks/%.c,$(BUILD)/attacks/%,$(filter-out $(ATK_SRC),$(wildcard tests/attacks/*.c)))

VMLINUX    := vmlinux/vmlinux.h
ARCH       := $(shell uname -m | sed 's/x86_64/x86/; s/aarch64/arm64/')

.PHONY: all deps demo attacks test unit asan valgrind bench fuzz clean install vmtest eval eval-check format
.PHONY: help man tests check-commits
PROGS := $(BUILD)/mncctl $(if $(MNCD_SRC),$(BUILD)/mncd) $(if $(MCP_SRC),$(BUILD)/mnc-mcp)
all: $(BUILD)/libmnc.a $(BUILD)/libmnc.so $(BUILD)/libmnc.pc $(PROGS) $(BPF_OBJ) $(SKELS) man

deps:
	bash .ci/install-deps

# the targets with one line each, from this file's header
help:
	@sed -n 's/^#   make \([a-z-]*\) */  \1\t/p' $(firstword $(MAKEFILE_LIST)) | expand -t 18

# ---- man pages: docs/man/NAME.SECTION.scd -> $(BUILD)/man/NAME.SECTION (scdoc, Debian package scdoc)
MAN_SRC  := $(sort $(wildcard docs/man/*.scd))
MANPAGES := $(MAN_SRC:docs/man/%.scd=$(BUILD)/man/%)
man: $(MANPAGES)
$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	scdoc <$< >$@.tmp && mv $@.tmp $@

# ---- vmlinux.h for CO-RE, generated from the running kernel's BTF
$(VMLINUX):
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

# ---- BPF objects and skeletons
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) $(VMLINUX)
	@mkdir -p $(dir $@)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ivmlinux -Ibpf -Iuser/include \
		-c $< -o $@

$(BUILD)/include/%.skel.h: $(BUILD)/bpf/%.bpf.o
	@mkdir -p $(dir $@)
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

# ---- C objects (every object waits for the skeletons so loader code can include them)
# -MMD -MP: each object depends on exactly the headers it includes (build/obj/**/*.d)
# (an object without its .d - built before this rule - is rebuilt once to get one)
$(BUILD)/obj/%.o: %.c $(BUILD)/obj/%.d | $(SKELS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/obj/%.d: ;
.PRECIOUS: $(BUILD)/obj/%.d
# mncd's files include the daemon's headers and the sweep's (user/mncd/enforcer/) by name
$(BUILD)/obj/user/mncd/%.o: CPPFLAGS += -Iuser/mncd -Iuser/mncd/enforcer
# the pre-taint sweep's files, wherever they are (user/mncd/enforcer/, docs/privsep.md "Layout")
mncd_src = $(firstword $(wildcard user/mncd/$(1) user/mncd/enforcer/$(1)))
SWEEP_SRC := $(foreach f,fdscan.c fdscan_host.c fdscan_obj.c hostscan.c inflight.c sockdiag.c freeze.c sockproc.c \
	sockbase.c sockjudge.c sockjudge_inet.c sockscan.c,$(call mncd_src,$(f)))

-include $(LIB_OBJ:.o=.d) $(LOADER_OBJ:.o=.d) $(CTL_OBJ:.o=.d) $(MNCD_OBJ:.o=.d) $(MCP_OBJ:.o=.d)

# The loader embeds the BPF objects through the skeletons: a changed program must rebuild it.
$(LOADER_OBJ): $(SKELS)

$(BUILD)/libmnc.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# libmnc.so exports exactly the functions the public headers declare (user/lib/public-api.sh):
# the internal modules (mnc_util.h, mnc_htab.h, json_strict.h, policy_int.h) and the benchmark
# knobs (mnc_bench.h) stay in libmnc.a for the tree's own programs, tests and benchmarks.
$(BUILD)/libmnc.map: user/lib/public-api.sh $(wildcard user/include/mnc/*.h)
	@mkdir -p $(dir $@)
	{ echo 'LIBMNC_0 {'; echo '  global:'; sh user/lib/public-api.sh | sed 's/.*/    &;/'; \
	  echo '  local: *;'; echo '};'; } > $@.tmp && mv $@.tmp $@

$(BUILD)/libmnc.so: $(LIB_OBJ) $(BUILD)/libmnc.map
	$(CC) -shared -Wl,-soname,libmnc.so.0 -Wl,--version-script=$(BUILD)/libmnc.map $(LDFLAGS) -o $@ $(LIB_OBJ) $(LDLIBS)

$(BUILD)/libmnc.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=/usr/local\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: libmnc\nDescription: Minimum-Necessary Communication for LLM-agent hosts\nVersion: $(VERSION)\nRequires.private: libcjson libcrypto libisal libpq\nLibs: -L$${libdir} -lmnc\nLibs.private: -lm -lpthread\nCflags: -I$${includedir}\n' > $@

# mncctl speaks mncd's privsep protocol on the enforcer's admin socket (user/mncctl/admin.c), and
# loads libpq on first use (user/mncctl/pq_lazy.c): a launch does not pay for it
CTL_PSP_OBJ := $(addprefix $(BUILD)/obj/user/mncd/,privsep.o psp_io.o wsrec.o)
$(BUILD)/mncctl: $(CTL_OBJ) $(CTL_PSP_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a
	$(CC) $(LDFLAGS) -o $@ $(CTL_OBJ) $(CTL_PSP_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a $(filter-out -lpq,$(LDLIBS))

$(BUILD)/mncd: $(MNCD_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a
	$(CC) $(LDFLAGS) -o $@ $(MNCD_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS)

# mnc-mcp needs only libmnc (protocol client, strict JSON, policy loader), not the BPF loader
$(BUILD)/mnc-mcp: $(MCP_OBJ) $(BUILD)/libmnc.a
	$(CC) $(LDFLAGS) -o $@ $(MCP_OBJ) $(BUILD)/libmnc.a $(LDLIBS)

# ---- tests: one cmocka binary per tests/unit/test_*.c, linked with libmnc and the loader
$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka
# test_wstaint compiles mncd's wstaint.c in (it is not part of libmnc)
$(BUILD)/tests/test_wstaint: user/mncd/wstaint.c
# test_privsep compiles mncd's privsep.c in (the monitor/enforcer protocol, docs/privsep.md)
$(BUILD)/tests/test_privsep: user/mncd/privsep.c
# test_privdrop compiles mncd's privdrop.c in (the monitor's and the enforcer's privilege drops)
$(BUILD)/tests/test_privdrop: user/mncd/privdrop.c
# test_wsrec compiles mncd's wsrec.c in (the enforcer's binary records in trusted.* xattrs)
$(BUILD)/tests/test_wsrec: user/mncd/wsrec.c
# test_psp_io compiles mncd's privsep.c and psp_io.c in (messages over SOCK_SEQPACKET)
$(BUILD)/tests/test_psp_io: user/mncd/privsep.c user/mncd/psp_io.c
# The enforcer (user/mncd/enforcer/, docs/privsep.md) with the protocol and the sweep it uses:
# test_enforcer runs it against a scripted monitor, test_ek_kern its kernel layer on the real kernel,
# test_mon_psp against the monitor's side.
ENF_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(sort $(wildcard user/mncd/enforcer/*.c) \
	$(addprefix user/mncd/,privsep.c psp_io.c privdrop.c wsrec.c) $(SWEEP_SRC)))
-include $(ENF_OBJ:.o=.d) $(BUILD)/obj/user/mncd/monitor/mon_psp.d
$(BUILD)/tests/test_enforcer: tests/unit/test_enforcer.c $(ENF_OBJ) $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ENF_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka
$(BUILD)/tests/test_ek_kern: tests/unit/test_ek_kern.c $(ENF_OBJ) $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ENF_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka
$(BUILD)/tests/test_mon_psp: tests/unit/test_mon_psp.c $(ENF_OBJ) $(BUILD)/obj/user/mncd/monitor/mon_psp.o $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(ENF_OBJ) $(BUILD)/obj/user/mncd/monitor/mon_psp.o $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka

# test_answer compares mncd's send/recv answers written as text (answer.o) with the trees
$(BUILD)/tests/test_answer: tests/unit/test_answer.c $(BUILD)/obj/user/mncd/answer.o $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iuser/mncd $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/obj/user/mncd/answer.o $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka

# test_inflight drives mncd's SCM_RIGHTS peek/drain on real sockets: it links mncd's inflight.o
INFLIGHT_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(call mncd_src,inflight.c))
$(BUILD)/tests/test_inflight: tests/unit/test_inflight.c $(INFLIGHT_OBJ) $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iuser/mncd -Iuser/mncd/enforcer $(CFLAGS) $(LDFLAGS) -o $@ $< $(INFLIGHT_OBJ) $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka

# test_gate drives the launcher's seccomp gate (run_gate.o) on the real kernel
$(BUILD)/tests/test_gate: tests/unit/test_gate.c $(BUILD)/obj/user/mncctl/run_gate.o $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iuser/mncctl $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/obj/user/mncctl/run_gate.o $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS) -lcmocka

$(BUILD)/bench/%: tests/bench/%.c $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS)

# The corpus' shared harness (atk.c and the atkv_*.c modules behind atk_variants.h: 4,000
# lines that every attack used to recompile) is compiled once into $(BUILD)/atk/, outside
# $(BUILD)/attacks (run-attacks runs every file there), and linked into each attack.
# ATTACK_CFLAGS=-static (the qemu guest's corpus) applies at the link.
ATK_HDR := tests/attacks/atk.h tests/attacks/atk_variants.h tests/attacks/atk_recvq.h $(wildcard tests/attacks/atkv_*.h)
ATK_OBJ := $(patsubst tests/attacks/%.c,$(BUILD)/atk/%.o,$(ATK_SRC))
.SECONDARY: $(ATK_OBJ)
$(BUILD)/atk/%.o: tests/attacks/%.c $(ATK_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/attacks/%: tests/attacks/%.c $(ATK_OBJ) $(ATK_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ATTACK_CFLAGS) $(LDFLAGS) -o $@ $< $(ATK_OBJ)

attacks: $(ATTACKS)

# tests/tools/hostnoise: what systemd and journald hold (epoll, eventfd, timerfd, inotify,
# signalfd, memfd, pidfd); tests/run-tests keeps one running for the whole of `make test`
HOSTNOISE := $(BUILD)/tools/hostnoise
$(HOSTNOISE): tests/tools/hostnoise.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $<

# the agent's seccomp filters, compiled once at build time (user/mncctl/run_filter.h)
$(BUILD)/gen/run_filter_gen: user/mncctl/gen/run_filter_gen.c $(BUILD)/obj/user/mncctl/run_filter.o user/mncctl/run_filter.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iuser/mncctl $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/obj/user/mncctl/run_filter.o -lseccomp
$(BUILD)/include/run_filters.h: $(BUILD)/gen/run_filter_gen
	@mkdir -p $(dir $@)
	$< > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/user/mncctl/run_confine.o: $(BUILD)/include/run_filters.h

# bench_run measures the launcher's confinement itself: it links mncctl's run_confine.o (and run_gate.o, run_cgv1.o, run_mntns.o)
$(BUILD)/bench/bench_run: tests/bench/bench_run.c $(BUILD)/obj/user/mncctl/run_confine.o $(BUILD)/obj/user/mncctl/run_filter.o $(BUILD)/obj/user/mncctl/run_tty.o $(BUILD)/obj/user/mncctl/run_gate.o $(BUILD)/obj/user/mncctl/run_cgv1.o $(BUILD)/obj/user/mncctl/run_mntns.o $(BUILD)/libmnc.a $(LOADER_OBJ) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Iuser/mncctl $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/obj/user/mncctl/run_confine.o $(BUILD)/obj/user/mncctl/run_filter.o $(BUILD)/obj/user/mncctl/run_tty.o $(BUILD)/obj/user/mncctl/run_gate.o $(BUILD)/obj/user/mncctl/run_cgv1.o $(BUILD)/obj/user/mncctl/run_mntns.o $(LOADER_OBJ) $(BUILD)/libmnc.a $(LDLIBS)

demo: all
	BUILD=$(BUILD) tests/demo/worked-example.sh

unit: $(TESTS)
	BUILD=$(BUILD) tests/run-tests --unit-only

tests: $(TESTS) $(ATTACKS) $(HOSTNOISE)

test: all $(TESTS) $(ATTACKS) $(HOSTNOISE)
	BUILD=$(BUILD) tests/run-tests

# Unit tests under ASan+UBSan, then mncd and mncctl themselves under them on the real kernel, in
# the integration tests that drive the fd scan, the socket sweep and the launcher (a dirent used
# after closedir in the fd scan was found this way). Leak checks off there: the launcher's child
# runs under seccomp, where LeakSanitizer cannot stop the world.
ASAN_INTEGRATION := test_kernel_fdscan test_kernel_foreign test_run_confine
asan:
	$(MAKE) BUILD=$(BUILD)-asan SAN=1 unit
	$(MAKE) BUILD=$(BUILD)-asan SAN=1 all $(BUILD)-asan/tools/hostnoise
	@fail=0; for t in $(ASAN_INTEGRATION); do \
	    if ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1 BUILD=$(BUILD)-asan \
	        tests/integration/$$t >$(BUILD)-asan/$$t.log 2>&1 && ! grep -q '^not ok' $(BUILD)-asan/$$t.log; then \
	        echo "asan clean: $$t ($$(grep -c '^ok' $(BUILD)-asan/$$t.log) ok)"; \
	    else echo "asan FAILED: $$t (log: $(BUILD)-asan/$$t.log)"; fail=1; fi; \
	done; exit $$fail

# the paper's Tables 1-4 on CalBench/AgentLeak (tests/eval; docs/eval.md); EVAL_ARGS=--quick for CI
EVAL_ARGS ?= --doc docs/eval.md
eval: all
	BUILD=$(BUILD) tests/eval/run-eval $(EVAL_ARGS)

# fails if docs/eval.md's tables were not generated from the current user/ bpf/ loader/ and
# harness sources (docs/eval.md, "Staleness"); make test only warns
eval-check:
	tests/eval/run-eval --check-doc docs/eval.md

# Every unit test under valgrind (leaks and memory errors fail).
valgrind: $(TESTS)
	@fail=0; for t in $(TESTS); do \
	    if valgrind -q --suppressions=tests/valgrind.supp --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
	        $$t >$$t.valgrind.log 2>&1; then echo "valgrind clean: $$t"; \
	    else echo "valgrind FAILED: $$t (log: $$t.valgrind.log)"; fail=1; fi; \
	done; exit $$fail

bench: all $(BENCHES) $(HOSTNOISE)
	BUILD=$(BUILD) tests/run-bench

format:
	git ls-files '*.c' '*.h' ':!:vmlinux/*' | xargs clang-format-14 -i --style=file

fuzz:
	$(MAKE) -C tests/fuzz BUILD=$(abspath $(BUILD))/fuzz

vmtest: all
	bash tests/vm/run-vmtest

install: all
	install -d $(DESTDIR)/usr/local/bin $(DESTDIR)/usr/local/lib/pkgconfig $(DESTDIR)/usr/local/include/mnc
	install -m 0755 $(PROGS) $(DESTDIR)/usr/local/bin/
	install -m 0644 $(BUILD)/libmnc.a $(BUILD)/libmnc.so $(DESTDIR)/usr/local/lib/
	install -m 0644 $(BUILD)/libmnc.pc $(DESTDIR)/usr/local/lib/pkgconfig/
	install -m 0644 user/include/mnc/*.h bpf/mnc_abi.h $(DESTDIR)/usr/local/include/mnc/
	install -d $(DESTDIR)/usr/local/share/mnc/policies/examples
	install -m 0644 policies/*.json $(DESTDIR)/usr/local/share/mnc/policies/
	install -m 0644 policies/examples/*.json $(DESTDIR)/usr/local/share/mnc/policies/examples/
	install -d $(DESTDIR)/usr/local/share/doc/mnc
	install -m 0644 README.md NEWS.md LICENSE docs/*.md $(DESTDIR)/usr/local/share/doc/mnc/
	install -d $(DESTDIR)/usr/local/share/doc/mnc/LICENSES
	install -m 0644 LICENSES/*.txt $(DESTDIR)/usr/local/share/doc/mnc/LICENSES/
	for m in $(MANPAGES); do s=$${m##*.}; install -d $(DESTDIR)/usr/local/share/man/man$$s && \
	    install -m 0644 $$m $(DESTDIR)/usr/local/share/man/man$$s/ || exit 1; done

check-commits:
	bash .ci/check-commits

clean:
	rm -rf build build-asan
