"""A server that accepts and then forks (as PostgreSQL's postmaster does) serves from the child:
the child's reads and writes of the inherited socket are captured too. A child that execs a
program loses the close-on-exec sockets, and with them their capture."""
import socket
import subprocess
import sys
import textwrap

from conftest import free_port

SERVER = textwrap.dedent("""
    import os, socket, sys
    port, n = int(sys.argv[1]), int(sys.argv[2])
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(8)
    print("ready", flush=True)
    conn, _ = ls.accept()
    child = os.fork()
    if child == 0:
        ls.close()
        print("child", os.getpid(), flush=True)
        buf = b""
        for _ in range(n):
            while b"\\r\\n\\r\\n" not in buf:
                buf += conn.recv(4096)
            buf = buf.split(b"\\r\\n\\r\\n", 1)[1]
            conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 3\\r\\n\\r\\nok\\n")
        os._exit(0)
    conn.close()
    os.waitpid(child, 0)
""")


def l7(events, **want):
    return [e for e in events if e.get("type") == "l7" and all(e.get(k) == v for k, v in want.items())]


def test_accept_then_fork_is_served_by_the_child(agent_factory):
    agent = agent_factory()
    port, n = free_port(), 20
    srv = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(n)], stdout=subprocess.PIPE, text=True)
    try:
        assert srv.stdout.readline().strip() == "ready"
        c = socket.create_connection(("127.0.0.1", port))
        child = int(srv.stdout.readline().split()[1])
        src = "%s:%d" % c.getsockname()[:2]
        for _ in range(n):
            c.sendall(b"GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
            got = b""
            while not got.endswith(b"ok\n"):
                got += c.recv(4096)
        c.close()
        assert srv.wait(20) == 0
        evs = agent.wait_for(lambda evs: len(l7(evs, src=src, dir="in")) >= n and evs,
                             what=f"{n} requests served by the forked child")
        ins = l7(evs, src=src, dir="in")
        assert len(ins) == n and {e["pid"] for e in ins} == {child}
        assert all((e["method"], e["path"], e["status"]) == ("GET", "/x", 200) for e in ins)
    finally:
        if srv.poll() is None:
            srv.kill()
