# nodescope build. `sudo make run` and `sudo make check` are the two set-up commands.

CLANG    ?= clang
BPFTOOL  ?= bpftool
PYTHON   ?= /usr/bin/python3

# The architecture built for: x86 (x86-64, this machine's) into build/, or
# arm64, cross-compiled by clang and lld against Debian's arm64 libraries
# (installed through multiarch by `make deps-arm64`) into build-arm64/.
# `make ARCH=arm64` builds the agent; `make check-arm64` boots it in a VM.
ARCH     ?= x86
override ARCH := $(patsubst x86_64,x86,$(patsubst amd64,x86,$(patsubst aarch64,arm64,$(ARCH))))
ARCH_TRIPLET_x86   := x86_64-linux-gnu
ARCH_TRIPLET_arm64 := aarch64-linux-gnu
ifeq ($(ARCH_TRIPLET_$(ARCH)),)
$(error ARCH=$(ARCH): nodescope builds for ARCH=x86 or ARCH=arm64)
endif
ifeq ($(ARCH),x86)
BUILD    := build
else
BUILD    := build-$(ARCH)
CC       := $(CLANG) --target=$(ARCH_TRIPLET_$(ARCH))
LDFLAGS  += -fuse-ld=lld
endif
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo 0.0.0)
LISTEN   ?= 127.0.0.1:9645

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
            -I$(BUILD) -Isrc -Ibpf -MMD -MP
LDLIBS   := -lbpf -lelf -lz -lmicrohttpd -lcapstone -ljansson -pthread

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SRCS     := $(shell find src -name '*.c' | sort)
OBJS     := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT_SRCS:= $(wildcard tests/unit/test_*.c)
UNIT_BINS:= $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps run check check-asan test test-unit test-e2e test-kernels test-vm-run bench clean
all: $(BUILD)/nodescope

deps:
	@scripts/install-deps.sh

# What the arm64 cross build and its VM need (not part of `make deps`).
.PHONY: deps-arm64
deps-arm64:
	@scripts/install-deps-arm64.sh

# The kernel's types for the BPF side come from the repo, one header per
# architecture, so the build does not depend on the build machine's kernel.
# `make vmlinux-h VMLINUX_BTF=...` regenerates it from a kernel's BTF (a newer
# kernel is better: CO-RE only needs the types to exist somewhere).
BPF_ARCH    ?= $(ARCH)
VMLINUX_H   := bpf/vmlinux/$(BPF_ARCH)/vmlinux.h
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
.PHONY: vmlinux-h
vmlinux-h:
	@mkdir -p $(dir $(VMLINUX_H))
	$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $(VMLINUX_H).tmp
	mv $(VMLINUX_H).tmp $(VMLINUX_H)

# A header dumped from a kernel built with -fms-extensions (6.19 on) has members
# like `struct ns_tree;` that clang drops with a warning: harmless, CO-RE finds
# every field the programs use by name in the running kernel's BTF.
BPF_CFLAGS_arm64 := -Wno-missing-declarations
$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) $(wildcard bpf/*.h bpf/arch/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) $(BPF_CFLAGS_$(BPF_ARCH)) \
		-I$(dir $(VMLINUX_H)) -Ibpf -c $< -o $@

# All BPF objects are statically linked into one, so maps (loss counters) are shared.
$(BUILD)/nodescope.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/nodescope.skel.h: $(BUILD)/nodescope.bpf.o
	$(BPFTOOL) gen skeleton $< name nodescope_bpf > $@.tmp && mv $@.tmp $@

# Rewritten only when the version changes, so only version.o is rebuilt.
$(BUILD)/version.gen.h: FORCE
	@mkdir -p $(@D)
	@echo '#define NODESCOPE_VERSION "$(VERSION)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@
FORCE:
$(BUILD)/obj/version.o: $(BUILD)/version.gen.h

$(BUILD)/obj/%.o: src/%.c | $(BUILD)/nodescope.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libnodescope.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/nodescope: $(BUILD)/obj/main.o $(BUILD)/libnodescope.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libnodescope.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libnodescope.a -lcmocka $(LDLIBS) -lm

run: deps $(BUILD)/nodescope
	$(BUILD)/nodescope --listen $(LISTEN)

test-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

# Debian's own Node.js 18 for the TLS event-loop tests, extracted, not installed.
$(BUILD)/node18/node:
	scripts/fetch-debian-node.sh $(abspath $(BUILD))/node18

test-e2e: $(BUILD)/nodescope $(BUILD)/node18/node
	$(PYTHON) -m pytest -v tests/e2e

# The kernel matrix: the smoke suite on this machine, then inside each kernel of
# tests/kernels/$(KERNEL_ARCH).list booted under qemu, each compared with this machine's
# (tests/kernels/matrix.py; KERNELS="6.1 sid" runs some). The kernels are downloaded from
# Debian's archive into build/kernels/ the first time. test-vm-run tests the machinery itself.
KERNEL_ARCH ?= amd64
KERNELS     ?=
test-kernels: $(BUILD)/nodescope $(BUILD)/go-get
	$(PYTHON) tests/kernels/matrix.py --arch $(KERNEL_ARCH) $(KERNELS)

# The smoke suite's Go HTTPS client, built with Debian's go for the architecture built for
# (static, stripped: as most Go programs ship).
GOARCH_x86   := amd64
GOARCH_arm64 := arm64
$(BUILD)/go-get: tests/e2e/clients/go_get.go
	@mkdir -p $(BUILD)/go
	HOME=$(CURDIR)/$(BUILD)/go GOCACHE=$(CURDIR)/$(BUILD)/go/cache GO111MODULE=off GOFLAGS= \
		CGO_ENABLED=0 GOARCH=$(GOARCH_$(ARCH)) go build -ldflags='-s -w' -o $@ $<

test-vm-run: $(BUILD)/nodescope $(BUILD)/go-get
	tests/kernels/test_vm_run.sh

test: test-unit fuzz-smoke test-e2e test-vm-run test-kernels

check: deps
	$(MAKE) all
	$(MAKE) test

# The arm64 kernel matrix: the smoke suite of test-kernels (tests/kernels/smoke.py) inside each
# kernel of tests/kernels/arm64.list, booted by scripts/vm-run.sh under qemu-system-aarch64 (TCG)
# on a Debian 12 arm64 userland (debootstrap, cached in build-vm/arm64), with the agent and the
# Go client cross-built into build-arm64/. No arm64 host run: every check must pass (matrix.py).
# Separate from `make check`: emulation is slow (README). KERNELS="6.1" runs some.
VM_CACHE     := build-vm
ARM64_BUILD  := build-arm64
VM_TIMEOUT   ?= 1200
.PHONY: check-arm64
check-arm64: deps-arm64
	$(MAKE) ARCH=arm64 all $(ARM64_BUILD)/go-get
	scripts/vm/rootfs.sh arm64 $(VM_CACHE)/arm64
	$(PYTHON) tests/kernels/matrix.py --arch arm64 --root $(CURDIR)/$(VM_CACHE)/arm64/root \
		--timeout $(VM_TIMEOUT) --vm-smoke-arg=--agent=$(CURDIR)/$(ARM64_BUILD)/nodescope \
		--vm-smoke-arg=--go-client=$(CURDIR)/$(ARM64_BUILD)/go-get $(KERNELS)

# What bench/ runs besides the agent: the load generators (bench/gen/*.c), the floor's
# loader and its BPF objects (bench/floor/, built with the agent's clang flags). `make`
# builds them on x86; the scripts find them in build/bench/ and build/bench-floor.
BENCH_GENS  := $(patsubst bench/gen/%.c,$(BUILD)/bench/%,$(wildcard bench/gen/*.c))
BENCH_BPF   := $(patsubst bench/floor/%.bpf.c,$(BUILD)/bench/%.bpf.o,$(wildcard bench/floor/*.bpf.c))
BENCH_TOOLS := $(BENCH_GENS) $(BENCH_BPF) $(BUILD)/bench-floor
.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)
ifeq ($(ARCH),x86)
all: bench-tools
endif

$(BUILD)/bench/%: bench/gen/%.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -pthread -o $@ $< $(BENCH_LDLIBS)
$(BUILD)/bench/link-close: BENCH_LDLIBS = -lbpf

$(BUILD)/bench/%.bpf.o: bench/floor/%.bpf.c $(VMLINUX_H) $(wildcard bpf/*.h bpf/arch/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) $(BPF_CFLAGS_$(BPF_ARCH)) \
		-I$(dir $(VMLINUX_H)) -Ibpf -c $< -o $@

$(BUILD)/bench-floor: bench/floor/floor.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -lbpf -lelf -lz

bench: $(BUILD)/nodescope bench-tools
	bench/idle

# The agent built with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan/ (never ./build) and run through the whole e2e suite. For a
# sanitized agent tests/e2e/conftest.py sets ASAN_OPTIONS/UBSAN_OPTIONS (unless
# given): the first report aborts the agent, leaks are checked at its exit, and
# a report in its stderr or an abort fails the test that ran it.
ASAN_BUILD  := build-asan
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined
check-asan: deps
	CFLAGS='$(ASAN_CFLAGS)' $(MAKE) BUILD=$(ASAN_BUILD) all
	NODESCOPE_AGENT=$(CURDIR)/$(ASAN_BUILD)/nodescope $(PYTHON) -m pytest -v tests/e2e

# libFuzzer targets: tests/fuzz/fuzz_NAME.c -> $(BUILD)/fuzz/fuzz_NAME, each run for
# FUZZ_SECONDS with its corpus in $(BUILD)/fuzz/corpus/fuzz_NAME (plus
# tests/fuzz/corpus/fuzz_NAME and tests/fuzz/fuzz_NAME.dict when they exist).
# `make fuzz` is the long run (10 minutes a target); `make fuzz-smoke`, in
# `make check`, gives each 10 s.
FUZZ_SECONDS ?= 600
FUZZ_ARGS    ?= -max_len=16384
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -std=gnu11 -Isrc -Ibpf -I$(BUILD)
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))

# The src files each target is built with.
$(BUILD)/fuzz/fuzz_http: src/l7/http.c src/l7/http.h
# The database parsers: every target links the protocol table and all of them.
L7_DB_SRCS := src/l7/proto.c src/l7/pair.c src/l7/reader.c src/l7/stmts.c src/l7/sql_strip.c \
	src/l7/postgres.c src/l7/mysql.c src/l7/redis.c src/l7/memcached.c src/l7/mongo.c \
	src/l7/clickhouse.c
$(patsubst %,$(BUILD)/fuzz/fuzz_l7_%,postgres mysql redis memcached mongo clickhouse): \
	$(L7_DB_SRCS) tests/fuzz/fuzz_l7_db.h
$(BUILD)/fuzz/fuzz_eh_frame: src/tls/eh_frame.c src/tls/eh_frame.h
$(BUILD)/fuzz/fuzz_go_binary: src/tls/go_binary.c src/tls/go_binary.h
$(BUILD)/fuzz/fuzz_cgroup_names: src/containers/cgroup_path.c src/containers/rules.c \
	src/containers/kind.c src/containers/name.c src/containers/meta.c
$(BUILD)/fuzz/fuzz_runtime_json: src/containers/runtime_json.c src/containers/meta.c \
	src/containers/name.c src/containers/rules.c src/containers/kind.c \
	src/containers/cgroup_path.c
$(BUILD)/fuzz/fuzz_taskstats: src/resources/taskstats.c src/resources/taskstats.h \
	src/util/netlink.c
$(BUILD)/fuzz/fuzz_cgroup_files: src/resources/cgroup_parse.c src/resources/cgroup_parse.h \
	src/resources/disk_parse.c src/resources/disk_parse.h src/containers/cgroup_path.c
# Libraries a target links besides its src files (not instrumented: jansson
# is Debian's; the target fuzzes our use of it).
$(BUILD)/fuzz/fuzz_runtime_json: FUZZ_LDLIBS = -ljansson
# The node targets' src files.
$(BUILD)/fuzz/fuzz_node_netlink: src/node/netlink.c src/node/netlink.h src/util/netlink.c
$(BUILD)/fuzz/fuzz_node_proc: src/node/stat.c src/node/meminfo.c src/node/diskstats.c \
	src/node/fields.c src/node/stat.h src/node/meminfo.h src/node/diskstats.h

$(BUILD)/fuzz/%: tests/fuzz/%.c
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(filter %.c,$(filter-out $<,$^)) $(FUZZ_LDLIBS)

.PHONY: fuzz fuzz-smoke
fuzz fuzz-smoke: $(FUZZ_BINS)
	@set -e; for f in $(FUZZ_BINS); do \
		n=$$(basename $$f); corpus=$(BUILD)/fuzz/corpus/$$n; mkdir -p $$corpus; \
		seeds=; test -d tests/fuzz/corpus/$$n && seeds=tests/fuzz/corpus/$$n; \
		dict=; test -f tests/fuzz/$$n.dict && dict=-dict=tests/fuzz/$$n.dict; \
		echo "== $$n for $(FUZZ_SECONDS)s"; \
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(FUZZ_ARGS) $$dict \
			-artifact_prefix=$(BUILD)/fuzz/$$n- $$corpus $$seeds; \
	done
fuzz-smoke: FUZZ_SECONDS = 10

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
