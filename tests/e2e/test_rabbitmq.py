"""RabbitMQ against a real rabbitmq-server (started by the test, in a directory of its own) with
python3-pika: messages published (produce) and delivered (consume) are counted in Coroot's
container_rabbitmq_messages_total{method}."""
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import free_port

SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"
TOTAL = "container_rabbitmq_messages_total"


def msum(metrics, name, **labels):
    want = set(labels.items())
    return sum(v for k, v in metrics.get(name, {}).items() if want <= set(k))


@pytest.fixture
def rabbitmq():
    if not os.access(SERVER, os.X_OK):
        pytest.fail("rabbitmq-server is missing: apt-get install rabbitmq-server (scripts/install-deps.sh)")
    d = tempfile.mkdtemp(prefix="nodescope-e2e-rmq.")
    os.makedirs(os.path.join(d, "home"))
    with open(os.path.join(d, "plugins"), "w") as f:
        f.write("[].\n")
    with open(os.path.join(d, "rabbitmq.conf"), "w") as f:
        f.write("loopback_users = none\n")
    port, dist, epmd = free_port(), free_port(), free_port()
    env = dict(os.environ, HOME=os.path.join(d, "home"), RABBITMQ_NODENAME=f"nodescope{port}@localhost",
               RABBITMQ_NODE_IP_ADDRESS="127.0.0.1", RABBITMQ_NODE_PORT=str(port),
               RABBITMQ_DIST_PORT=str(dist), ERL_EPMD_PORT=str(epmd),
               RABBITMQ_MNESIA_BASE=os.path.join(d, "mnesia"), RABBITMQ_LOG_BASE=os.path.join(d, "log"),
               RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(d, "plugins"),
               RABBITMQ_CONFIG_FILE=os.path.join(d, "rabbitmq"))
    log = open(os.path.join(d, "server.log"), "wb")
    p = subprocess.Popen([SERVER], env=env, stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + 90
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if p.poll() is not None or time.monotonic() > deadline:
                os.killpg(p.pid, 9)
                pytest.fail("rabbitmq-server did not start: " + open(os.path.join(d, "server.log")).read()[-2000:])
            time.sleep(0.2)
    yield port
    os.killpg(p.pid, 15)
    try:
        p.wait(30)
    finally:
        try:
            os.killpg(p.pid, 9)
        except ProcessLookupError:
            pass
        # the epmd the server started for itself is a daemon of its own
        subprocess.run([shutil.which("epmd") or "/usr/bin/epmd", "-kill"], env=env, capture_output=True)
        shutil.rmtree(d, ignore_errors=True)


def test_publish_and_deliver(agent_factory, rabbitmq):
    import pika

    port = rabbitmq
    addr = f"127.0.0.1:{port}"
    agent = agent_factory()
    m0 = agent.metrics()
    c = pika.BlockingConnection(pika.ConnectionParameters(host="127.0.0.1", port=port, heartbeat=0))
    ch = c.channel()
    ch.queue_declare("jobs")
    n = 20
    for i in range(n):
        ch.basic_publish("", "jobs", b"secret-payload-%d" % i)
    got = 0
    for method, props, body in ch.consume("jobs", auto_ack=True, inactivity_timeout=10):
        assert method is not None, f"only {got} of {n} delivered"
        got += 1
        if got == n:
            break
    ch.cancel()
    c.close()
    want = {"produce": n, "consume": n}
    deadline = time.monotonic() + 15
    while True:
        m = agent.metrics()
        res = {k: msum(m, TOTAL, destination=addr, method=k, status="ok") -
               msum(m0, TOTAL, destination=addr, method=k, status="ok") for k in want}
        if res == want or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert res == want
