#!/bin/sh
# Captures the node files the node parsers' unit tests read
# (tests/unit/test_node_parse.c), from the machine it runs on: /proc/stat,
# /proc/meminfo, /proc/uptime, /proc/diskstats, and the raw answers of an
# rtnetlink link dump and address dump (the datagrams one after another,
# up to NLMSG_DONE). Not part of any test run: the files are checked in,
# and the tests name the values they hold (rerun, then update the tests).
set -eu
out=$(cd "$(dirname "$0")" && pwd)
for f in stat meminfo uptime diskstats; do
	cat /proc/$f > "$out/$f"
done
/usr/bin/python3 - "$out" <<'PY'
import socket, struct, sys
RTM_GETLINK, RTM_GETADDR, NLMSG_DONE, NLMSG_ERROR = 18, 22, 3, 2
for name, kind in (("links.nl", RTM_GETLINK), ("addrs.nl", RTM_GETADDR)):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    body = struct.pack("BxHiII", 0, 0, 0, 0, 0)  # struct ifinfomsg, AF_UNSPEC
    s.send(struct.pack("IHHII", 16 + len(body), kind, 0x301, 1, 0) + body)  # REQUEST|DUMP
    data, done = b"", False
    while not done:
        d = s.recv(65536)
        data += d
        off = 0
        while off + 16 <= len(d):
            length, typ = struct.unpack_from("IH", d, off)
            done = done or typ in (NLMSG_DONE, NLMSG_ERROR)
            off += (length + 3) & ~3
    open(f"{sys.argv[1]}/{name}", "wb").write(data)
PY
