"""The socket hooks (--debug-socket-hooks, while they are being completed): the agent sees the
sockets' reads and writes from the tracepoints in sock_sendmsg and sock_recvmsg, listen(2) from a
sock_ops program on the root of cgroup v2, and mapped files where the kernel finds them room, so
that no program is left on sys_enter or sys_exit, which every syscall of the node would pay.

These tests check the hooks themselves; `make test-e2e-socket-hooks` runs the whole e2e suite
this way, which checks what the agent reports through them.
"""
import json
import os
import socket
import subprocess

from conftest import by_pid, not_seen_by_socket_hooks

SOCKET_TRACEPOINTS = {"sock_send_length", "sock_recv_length", "vm_unmapped_area"}
SYSCALL_TRACEPOINTS = {"sys_enter", "sys_exit"}


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


def test_no_program_is_left_on_the_syscall_hooks(agent_factory):
    a = agent_factory("--debug-socket-hooks")
    links = agent_links(a)
    assert not tracepoints(links) & SYSCALL_TRACEPOINTS, links
    assert SOCKET_TRACEPOINTS <= tracepoints(links), links
    assert [l for l in links if l.get("attach_type") == "cgroup_sock_ops"], links
    assert "socket hooks" not in a.stderr(), a.stderr()


@not_seen_by_socket_hooks("the environment asks for them")
def test_the_syscall_hooks_without_the_option(agent_factory):
    """The default until the socket hooks see all the syscall hooks do."""
    links = agent_links(agent_factory())
    assert SYSCALL_TRACEPOINTS <= tracepoints(links), links
    assert not tracepoints(links) & SOCKET_TRACEPOINTS, links
    assert not [l for l in links if l.get("attach_type") == "cgroup_sock_ops"], links


def test_a_kernel_without_them_keeps_the_syscall_hooks(agent_factory):
    a = agent_factory("--debug-socket-hooks", "--debug-kernel-lacks", "socket_hooks")
    links = agent_links(a)
    assert SYSCALL_TRACEPOINTS <= tracepoints(links), links
    assert not tracepoints(links) & SOCKET_TRACEPOINTS, links
    assert "this kernel has no socket hooks: the syscall hooks see the sockets" in a.stderr()


def test_listen_seen_from_the_sock_ops_program(agent_factory):
    """listen(2) moves a socket to LISTEN without the state tracepoint: the sock_ops callback
    names it, with the listening process and its fd (from the task's saved registers)."""
    a = agent_factory("--debug-socket-hooks")
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
    a = agent_factory("--debug-socket-hooks")
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
