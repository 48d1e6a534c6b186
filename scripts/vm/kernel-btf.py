#!/usr/bin/python3
"""Copies the BTF a kernel image carries (what it serves as /sys/kernel/btf/vmlinux)
out of an uncompressed or gzip-compressed image (Debian's arm64 vmlinuz is an
uncompressed Image), so `make vmlinux-h` can read it without booting the kernel.

The BTF blob is found by its header: magic 0xeb9f, version 1, a 24-byte header,
the types right after it and the strings right after them. Exactly one such
header must be in the image; bpftool then checks the whole blob when it dumps it.
Usage: kernel-btf.py IMAGE OUT"""
import gzip
import struct
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("Usage: ")[1])
    data = open(sys.argv[1], "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    head = struct.pack("<HBBI", 0xEB9F, 1, 0, 24)
    found = []
    at = data.find(head)
    while at >= 0:
        type_off, type_len, str_off, str_len = struct.unpack_from("<IIII", data, at + 8)
        end = at + 24 + str_off + str_len
        if type_off == 0 and str_off == type_len and str_len > 0 and end <= len(data):
            found.append((at, end))
        at = data.find(head, at + 1)
    if len(found) != 1:
        sys.exit("nodescope: %s: %d BTF headers, want exactly one (no CONFIG_DEBUG_INFO_BTF?)"
                 % (sys.argv[1], len(found)))
    at, end = found[0]
    with open(sys.argv[2], "wb") as f:
        f.write(data[at:end])
    print("nodescope: %s: %d bytes of BTF at offset 0x%x" % (sys.argv[1], end - at, at),
          file=sys.stderr)


main()
