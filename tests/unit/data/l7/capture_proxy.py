#!/usr/bin/python3
"""Records a client/server exchange for the L7 parser tests.

capture_proxy.py LISTEN_PORT SERVER_PORT OUT_FILE: accepts connections on
127.0.0.1:LISTEN_PORT, forwards each to 127.0.0.1:SERVER_PORT and appends
every read to OUT_FILE as one line: the connection's number (from 1), '>'
(client to server) or '<' (server to client), a space, the bytes in hex. A read is one chunk, as a syscall would
see it. Exits after the first connection closes (--all: never).
"""
import select
import socket
import sys
import threading


def pump(a, b, out, lock, n):
    conns = {a: (b, f"{n}>"), b: (a, f"{n}<")}
    while True:
        r, _, _ = select.select(list(conns), [], [])
        for s in r:
            data = s.recv(65536)
            if not data:
                return
            dst, tag = conns[s]
            with lock:
                out.write(f"{tag} {data.hex()}\n")
                out.flush()
            dst.sendall(data)


def main():
    listen_port, server_port, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    keep = "--all" in sys.argv
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(8)
    lock = threading.Lock()
    n = 0
    with open(path, "a") as out:
        while True:
            c, _ = ls.accept()
            s = socket.create_connection(("127.0.0.1", server_port))
            n += 1
            t = threading.Thread(target=pump, args=(c, s, out, lock, n))
            t.start()
            if not keep:
                t.join()
                return


if __name__ == "__main__":
    main()
