"""RabbitMQ against a real rabbitmq-server (srv_rabbitmq.py) with python3-pika: messages published
(produce) and delivered (consume) are counted in Coroot's container_rabbitmq_messages_total{method}."""
import pytest

from l7db import msum, wait_value
from srv_rabbitmq import RabbitMQ

TOTAL = "container_rabbitmq_messages_total"


@pytest.fixture
def rabbitmq():
    r = RabbitMQ()
    yield r
    r.stop()


def test_publish_and_deliver(agent_factory, rabbitmq):
    import pika

    agent = agent_factory()
    m0 = agent.metrics()
    c = pika.BlockingConnection(pika.ConnectionParameters(host="127.0.0.1", port=rabbitmq.port, heartbeat=0))
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

    def counts():
        m = agent.metrics()
        return {k: msum(m, TOTAL, destination=rabbitmq.addr, method=k, status="ok") -
                msum(m0, TOTAL, destination=rabbitmq.addr, method=k, status="ok") for k in ("produce", "consume")}
    assert wait_value(counts, {"produce": n, "consume": n}) == {"produce": n, "consume": n}
