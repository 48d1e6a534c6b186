"""Configuration by environment variables, as Coroot's DaemonSets give it: Coroot's names where
the meaning is Coroot's (LISTEN), NODESCOPE_* for nodescope's own options; a bad value is a usage
error (exit 2) with a message naming the variable."""
import os
import subprocess

from conftest import AGENT, Agent, free_port


def test_agent_configured_by_environment_only(monkeypatch):
    port = free_port()
    monkeypatch.setenv("LISTEN", f"127.0.0.1:{port}")
    monkeypatch.setenv("NODESCOPE_NO_TLS", "true")
    a = Agent(trace=False, listen=False, ephemeral_ports=None, keep_standalone=False)  # no option on the command line at all
    a.port = port
    try:
        assert a.cmd == [AGENT]
        assert f"serving http://127.0.0.1:{port}/" in a.stderr()
        # NODESCOPE_NO_TLS: no TLS probing, which the agent says in its metrics
        assert a.metric("nodescope_feature_enabled", feature="tls") == 0
        assert a.metric("nodescope_feature_enabled", feature="ring_buffer") == 1
    finally:
        assert a.stop() == 0


def test_command_line_wins_over_environment(monkeypatch):
    monkeypatch.setenv("LISTEN", "127.0.0.1:1")  # not the address the agent is given
    a = Agent(trace=False)  # --listen 127.0.0.1:<free port>
    try:
        assert a.metric("nodescope_feature_enabled", feature="tls") == 1
        assert "127.0.0.1:1/" not in a.stderr()
    finally:
        assert a.stop() == 0


def run_agent(*args, **env):
    return subprocess.run([AGENT, *args], env=dict(os.environ, **env), capture_output=True,
                          text=True, timeout=30)


def test_bad_environment_value_exits_2_with_a_message():
    p = run_agent(NODESCOPE_MAX_CONNECTIONS="0")
    assert p.returncode == 2, p
    assert p.stderr == "nodescope: bad NODESCOPE_MAX_CONNECTIONS='0' (1..16777216)\n"
    p = run_agent("trace", NODESCOPE_NO_TLS="maybe")
    assert p.returncode == 2, p
    assert p.stderr == "nodescope: bad NODESCOPE_NO_TLS='maybe' (1, 0, t, f, true, false, yes or no)\n"
    p = run_agent(LISTEN="localhost:80")
    assert p.returncode == 2, p
    assert p.stderr.startswith("nodescope: bad LISTEN='localhost:80' (HOST:PORT"), p.stderr
    assert p.stdout == ""


def test_bad_flag_value_exits_2_with_a_message():
    # once silent: the message names the flag and what it takes
    p = run_agent("--max-connections", "0")
    assert p.returncode == 2, p
    assert p.stderr == "nodescope: bad --max-connections '0' (1..16777216)\n"
