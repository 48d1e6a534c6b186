"""Kafka: Debian 12 has no Kafka broker, so the client's bytes are a real client library's
(python3-kafka: a KafkaProducer, and its network client fetching) and the broker is a stand-in
(srv_kafka.py, in its own process and cgroup) answering with that library's own encoders. Each
request is paired with its answer by correlation id on both sides (the client's container counts
it outbound, the stand-in's inbound), counted in Coroot's container_kafka_requests_* families
exactly as often as the client says it asked and the stand-in says it answered, and traced with
the api's name and first topic; a Produce the broker refuses (MESSAGE_TOO_LARGE) fails with its
error code, and so does a Metadata request for a topic the broker does not know, also in a burst
of requests in flight at once on one connection; a Produce with acks=0 has no answer and is not
counted."""
import json
import sys
from collections import Counter

import pytest

from l7db import assert_both_sides
from service import ClientCgroup
from srv_kafka import Kafka

P = "kafka"
# The apis python3-kafka sends here, by key, as the parser names them.
API = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 10: "FindCoordinator", 18: "ApiVersions"}
PRODUCES, FETCHES = 12, 4

# The client: its own counts on stdout. Every request it makes is waited for before it closes,
# so no answer is still on its way when it exits.
CLIENT = r"""
import json, sys
from kafka import KafkaProducer
from kafka.client_async import KafkaClient
from kafka.errors import MessageSizeTooLargeError
from kafka.protocol.fetch import FetchRequest
from kafka.protocol.metadata import MetadataRequest

addr, produces, fetches = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
out = {"produced": 0, "refused": 0, "unacked": 0, "fetched": 0, "known": 0, "unknown": 0}
p = KafkaProducer(bootstrap_servers=addr, client_id="e2e-producer", acks=1, retries=0)
for i in range(produces):
    p.send("events", value=b"e2e-secret-kafka-%d" % i).get(timeout=30)
    out["produced"] += 1
try:
    p.send("full", value=b"x" * 100).get(timeout=30)
except MessageSizeTooLargeError:
    out["refused"] += 1
p.close()
p0 = KafkaProducer(bootstrap_servers=addr, client_id="e2e-fire-and-forget", acks=0)
p0.send("events", value=b"unacked").get(timeout=30)
out["unacked"] += 1
p0.flush()
p0.close()
c = KafkaClient(bootstrap_servers=addr, client_id="e2e-reader", max_in_flight_requests_per_connection=64)
c.poll(future=c.cluster.request_update())
while not c.ready(0):
    c.poll(timeout_ms=100)
for i in range(fetches):
    f = c.send(0, FetchRequest[4](-1, 50, 1, 1 << 20, 0, [("events", [(0, i, 1 << 20)])]))
    c.poll(future=f)
    assert f.succeeded(), f.exception
    out["fetched"] += 1
# a burst in flight at once on one connection: topics that exist and one that does not, in turn
burst = [c.send(0, MetadataRequest[1](["nope" if i % 2 else "events"])) for i in range(2 * fetches)]
for f in burst:
    c.poll(future=f)
    assert f.succeeded(), f.exception
    out["unknown" if f.value.topics[0][0] else "known"] += 1
c.close()
print(json.dumps(out))
"""


@pytest.fixture
def kafka():
    k = Kafka()
    yield k
    k.stop()


def expected(req):
    """The trace line a request the stand-in answered gives: (op, statement, status, code)."""
    op = API[req["key"]]
    stmt = op + (" " + req["topic"] if req["topic"] else "")
    if req["key"] == 0 and req["topic"] == "full":
        return (op, stmt, "failed", "10")  # MESSAGE_TOO_LARGE
    if req["key"] == 3 and req["topic"] == "nope":
        return (op, stmt, "failed", "3")  # UNKNOWN_TOPIC_OR_PARTITION
    return (op, stmt, "ok", None)


def test_requests_paired_by_correlation_id(agent_factory, kafka):
    agent = agent_factory()
    client = ClientCgroup("kafka-client")
    m0 = agent.metrics()
    try:
        run = client.run([sys.executable, "-c", CLIENT, kafka.addr, str(PRODUCES), str(FETCHES)], timeout=120)
    finally:
        client.remove()
    own = json.loads(run.stdout)
    assert own == {"produced": PRODUCES, "refused": 1, "unacked": 1, "fetched": FETCHES, "known": FETCHES,
                   "unknown": FETCHES}, own

    # The stand-in read what the client says it sent, and answered all but the acks=0 Produce.
    reqs = kafka.requests()
    topics = Counter((API[r["key"]], r["topic"], r["answered"]) for r in reqs if r["key"] in (0, 1) or r["topic"])
    assert topics == {("Produce", "events", True): PRODUCES, ("Produce", "full", True): 1,
                      ("Produce", "events", False): 1, ("Fetch", "events", True): FETCHES,
                      ("Metadata", "events", True): FETCHES, ("Metadata", "nope", True): FETCHES}, topics
    answered = [r for r in reqs if r["answered"]]
    assert {r["key"] for r in answered} <= set(API), answered
    want = Counter(expected(r) for r in answered)
    assert_both_sides(agent, m0, P, "requests", client, kafka, want, "e2e-secret-kafka")
