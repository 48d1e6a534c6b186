# nodescope build. `sudo make run` and `sudo make check` are the two set-up commands.

CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
PYTHON   ?= /usr/bin/python3
BUILD    := build
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo 0.0.0)
LISTEN   ?= 127.0.0.1:9645

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
            -I$(BUILD) -Isrc -Ibpf -DNODESCOPE_VERSION='"$(VERSION)"' -MMD -MP
LDLIBS   := -lbpf -lelf -lz -lmicrohttpd

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
SRCS     := $(shell find src -name '*.c' | sort)
OBJS     := $(patsubst src/%.c,$(BUILD)/obj/%.o,$(SRCS))
LIB_OBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT_SRCS:= $(wildcard tests/unit/test_*.c)
UNIT_BINS:= $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

.PHONY: all deps run check test test-unit test-e2e bench clean
all: $(BUILD)/nodescope

deps:
	@scripts/install-deps.sh

$(BUILD)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.h)
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BUILD) -Ibpf -c $< -o $@

# All BPF objects are statically linked into one, so maps (loss counters) are shared.
$(BUILD)/nodescope.bpf.o: $(BPF_OBJS)
	$(BPFTOOL) gen object $@ $^

$(BUILD)/nodescope.skel.h: $(BUILD)/nodescope.bpf.o
	$(BPFTOOL) gen skeleton $< name nodescope_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: src/%.c | $(BUILD)/nodescope.skel.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libnodescope.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/nodescope: $(BUILD)/obj/main.o $(BUILD)/libnodescope.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libnodescope.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libnodescope.a -lcmocka $(LDLIBS)

run: deps $(BUILD)/nodescope
	$(BUILD)/nodescope --listen $(LISTEN)

test-unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

test-e2e: $(BUILD)/nodescope
	$(PYTHON) -m pytest -v tests/e2e

test: test-unit test-e2e

check: deps
	$(MAKE) all
	$(MAKE) test

bench: $(BUILD)/nodescope
	bench/idle

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
