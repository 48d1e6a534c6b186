"""The socket hooks: where the kernel has them (6.3+), the agent sees the sockets' reads and writes
from the tracepoints in sock_sendmsg and sock_recvmsg, listen(2) from a sock_ops program on the
root of cgroup v2, and mapped files where the kernel finds them room, so that no program is left
on sys_enter or sys_exit, which every syscall of the node would pay.

These tests check the hooks themselves; the rest of the e2e suite checks what the agent reports
through them, and `make test-e2e-syscall-hooks` runs it again on the syscall hooks.
"""
import json
import os
import socket
import subprocess

import pytest

from conftest import KERNEL_HAS_SOCKET_HOOKS, SYSCALL_HOOKS, by_pid

SOCKET_TRACEPOINTS = {"sock_send_length", "sock_recv_length", "vm_unmapped_area"}
SYSCALL_TRACEPOINTS = {"sys_enter", "sys_exit"}

# This file is about the socket hooks: it runs where the kernel has them, and fails loudly where
# it does not (test_the_kernel_has_them), rather than skipping.
pytestmark = pytest.mark.skipif(SYSCALL_HOOKS, reason="the syscall hooks were asked for "
                                "(make test-e2e-syscall-hooks); make test-e2e runs these")


def agent_links(agent):
    """bpftool's view of the BPF links the agent holds (by the link ids in its fds' fdinfo)."""
    ids = set()
    d = f"/proc/{agent.proc.pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                ids |= {int(l.split()[1]) for l in f if l.startswith("link_id:")}
        except OSError:
            pass
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True,
                         check=True).stdout
    return [link for link in json.loads(out) if link["id"] in ids]


def tracepoints(links):
    return {link.get("tp_name") for link in links if link.get("tp_name")}


def sock_ops(links):
    return [l for l in links if l.get("attach_type") == "cgroup_sock_ops"]


def assert_syscall_hooks(links):
    assert SYSCALL_TRACEPOINTS <= tracepoints(links), links
    assert not tracepoints(links) & SOCKET_TRACEPOINTS, links
    assert not sock_ops(links), links


def test_the_kernel_has_them():
    """The e2e suite expects a kernel with the socket hooks (the syscall hooks get their own
    pass): on an older one, this says why the tests below would fail."""
    assert KERNEL_HAS_SOCKET_HOOKS, "this kernel has no sock:sock_send_length tracepoint (6.3+)"


def test_no_program_is_left_on_the_syscall_hooks(agent_factory):
    """The default, where the kernel has them."""
    a = agent_factory()
    links = agent_links(a)
    assert not tracepoints(links) & SYSCALL_TRACEPOINTS, links
    assert SOCKET_TRACEPOINTS <= tracepoints(links), links
    assert sock_ops(links), links
    assert "socket hooks" not in a.stderr(), a.stderr()
    assert "socket_hooks" not in a.stderr(), a.stderr()


def test_the_syscall_hooks_when_asked_for(agent_factory):
    a = agent_factory("--debug-syscall-hooks")
    assert_syscall_hooks(agent_links(a))
    assert "socket hooks" not in a.stderr(), a.stderr()


def test_a_kernel_without_them_keeps_the_syscall_hooks(agent_factory):
    a = agent_factory("--debug-kernel-lacks", "socket_hooks")
    assert_syscall_hooks(agent_links(a))
    # The start-up line on features names what the syscall hooks cost.
    assert "socket_hooks" in a.stderr() and "every syscall on the node pays" in a.stderr(), \
        a.stderr()


def test_listen_seen_from_the_sock_ops_program(agent_factory):
    """listen(2) moves a socket to LISTEN without the state tracepoint: the sock_ops callback
    names it, with the listening process and its fd (from the task's saved registers)."""
    a = agent_factory()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    port, fd = s.getsockname()[1], s.fileno()
    addr = f"127.0.0.1:{port}"
    a.wait_for(lambda evs: [e for e in by_pid(evs, os.getpid(), "listen") if e["addr"] == addr],
               what="the listen line")
    s.close()
    a.wait_for(lambda evs: [e for e in by_pid(evs, os.getpid(), "listen_close")
                            if e["addr"] == addr], what="the listen_close line")
    listens = [e for e in by_pid(a.snapshot(), os.getpid(), "listen") if e["addr"] == addr]
    assert [e["fd"] for e in listens] == [fd], listens


def test_accept_found_at_the_first_read_or_write(agent_factory):
    """No accept hook: an inbound connection's owner is the process that first reads or writes
    it, with the fd it does so through."""
    a = agent_factory()
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]
    cli = socket.create_connection(("127.0.0.1", port))
    conn, _ = srv.accept()
    cli.sendall(b"ping")
    assert conn.recv(4, socket.MSG_WAITALL) == b"ping"
    fd = conn.fileno()
    a.wait_for(lambda evs: [e for e in by_pid(evs, os.getpid(), "accept")
                            if e["dst"].endswith(f":{port}")], what="the accept line")
    accepts = [e for e in by_pid(a.snapshot(), os.getpid(), "accept") if e["dst"].endswith(f":{port}")]
    assert [e["fd"] for e in accepts] == [fd], accepts
    for s in (cli, conn, srv):
        s.close()
