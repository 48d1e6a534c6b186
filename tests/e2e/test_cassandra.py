"""Cassandra: Debian 12 has no Cassandra server, so the client's bytes are a real client library's
(python3-cassandra's Cluster and Session, CQL protocol v4 and v5) and the node is a stand-in
(srv_cassandra.py, in its own process and cgroup) answering them. Each QUERY, PREPARE, EXECUTE and
BATCH is paired with its RESULT or ERROR by stream id on both sides (the client's container
counts it outbound, the stand-in's inbound), counted in Coroot's container_cassandra_queries_*
families exactly as often as the client says it asked and the stand-in says it answered (the
driver's own questions about the node included; its OPTIONS, STARTUP and REGISTER are not
queries), and traced with the statement's literals stripped; a query on a missing table fails
with its code (0x2200), also in a burst of queries in flight at once that the stand-in answers
in reverse order."""
import json
import re
import sys
from collections import Counter

import pytest

from l7db import assert_both_sides
from service import ClientCgroup
from srv_cassandra import Cassandra

P = "cassandra"
N = 10
OP_STARTUP, OP_OPTIONS, OP_QUERY, OP_PREPARE, OP_EXECUTE, OP_REGISTER, OP_BATCH = 1, 5, 7, 9, 10, 11, 13
OP_ERROR = 0

# The client: its own counts on stdout. Session.execute waits for each answer, and the driver
# asks nothing in the background here (no schema or token metadata, no heartbeats).
CLIENT = r"""
import json, sys
from cassandra import InvalidRequest
from cassandra.cluster import Cluster
from cassandra.query import BatchStatement, SimpleStatement

port, version, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
out = {"select": 0, "insert": 0, "prepare": 0, "execute": 0, "batch": 0, "failed": 0}
cluster = Cluster(["127.0.0.1"], port=port, protocol_version=version, schema_metadata_enabled=False,
                  token_metadata_enabled=False, idle_heartbeat_interval=0, connect_timeout=30,
                  control_connection_timeout=30)
s = cluster.connect("shop")
for i in range(n):
    assert [r.name for r in s.execute("SELECT name FROM users WHERE id = %s", ("e2e-secret-cql-%d" % i,))] == ["v"]
    out["select"] += 1
s.execute("INSERT INTO users (id, name) VALUES ('u1', 'e2e-secret-cql')")
out["insert"] += 1
p = s.prepare("SELECT name FROM users WHERE id = ?")
out["prepare"] += 1
for i in range(n):
    assert [r.name for r in s.execute(p, ["e2e-secret-cql-%d" % i])] == ["v"]
    out["execute"] += 1
b = BatchStatement()
for i in range(2):
    b.add(SimpleStatement("INSERT INTO users (id, name) VALUES ('b%d', 'e2e-secret-cql')" % i))
s.execute(b)
out["batch"] += 1
try:
    s.execute("SELECT * FROM no_such_table")
except InvalidRequest:
    out["failed"] += 1
# a burst in flight at once, failing and succeeding in turn (the stand-in answers it backwards)
burst = [s.execute_async("SELECT * FROM no_such_table" if i % 2 else "SELECT name FROM users WHERE id = 'burst'")
         for i in range(2 * n)]
for i, f in enumerate(burst):
    try:
        assert [r.name for r in f.result()] == ["v"] and not i % 2
        out["select"] += 1
    except InvalidRequest:
        out["failed"] += 1
cluster.shutdown()
print(json.dumps(out))
"""


@pytest.fixture
def cassandra():
    c = Cassandra()
    yield c
    c.stop()


def stripped(text):
    """The statement as the parser shows it: strings and value lists become ?."""
    return re.sub(r"VALUES \(.*\)", "VALUES (?)", re.sub(r"'[^']*'", "?", text))


def expected(r):
    """The trace line a query the stand-in answered gives: (op, statement, status, code)."""
    status = ("failed", r["code"]) if r["answer"] == OP_ERROR else ("ok", None)
    if r["op"] == OP_BATCH:
        return ("BATCH", "BATCH(2) INSERT INTO users (id, name) VALUES (?)") + status
    op = "PREPARE" if r["op"] == OP_PREPARE else r["statement"].split()[0].upper()
    return (op, stripped(r["statement"])) + status


@pytest.mark.parametrize("version", [4, 5])
def test_queries_paired_by_stream_id(agent_factory, cassandra, version):
    agent = agent_factory()
    client = ClientCgroup("cassandra-client")
    m0 = agent.metrics()
    try:
        run = client.run([sys.executable, "-c", CLIENT, str(cassandra.port), str(version), str(N)], timeout=120)
    finally:
        client.remove()
    own = json.loads(run.stdout)
    assert own == {"select": 2 * N, "insert": 1, "prepare": 1, "execute": N, "batch": 1, "failed": N + 1}, own

    # The stand-in read what the client says it sent.
    reqs = cassandra.requests()
    mine = Counter((r["op"], r["statement"]) for r in reqs if r["op"] != OP_QUERY or "users" in r["statement"])
    prep = "SELECT name FROM users WHERE id = ?"
    assert mine[(OP_QUERY, "SELECT name FROM users WHERE id = 'e2e-secret-cql-0'")] == 1
    assert sum(v for (op, st), v in mine.items() if op == OP_QUERY and st.startswith("SELECT")) == 2 * N
    assert (mine[(OP_PREPARE, prep)], mine[(OP_EXECUTE, prep)], mine[(OP_BATCH, None)]) == (1, N, 1), mine
    queries = [r for r in reqs if r["op"] not in (OP_STARTUP, OP_OPTIONS, OP_REGISTER)]
    assert {r["op"] for r in queries} == {OP_QUERY, OP_PREPARE, OP_EXECUTE, OP_BATCH}
    assert [r["code"] for r in queries if r["answer"] == OP_ERROR] == ["0x2200"] * (N + 1)
    want = Counter(expected(r) for r in queries)
    assert_both_sides(agent, m0, P, "queries", client, cassandra, want, "e2e-secret-cql")
