"""MongoDB tracing (l7): Debian 12 has no MongoDB server, so the bytes on the client side are a
real client's (python3-pymongo) and the server is a tiny responder (srv_mongo.py) that answers its
handshake and OP_MSG commands over a real loopback socket. Checked: each find is paired by
requestID on both sides, a command failing with a code (26, NamespaceNotFound) is failed with that
code, an insert with a document sequence is one request, no literal of a filter leaves the
process. pymongo's monitor sends isMaster heartbeats on its own connection meanwhile: the checks
count the test's own commands by their collection."""
import pymongo.errors
import pytest

from l7db import Counts, assert_secret_absent, settle, tracer_l7, wait_delta, with_text  # noqa: F401
from srv_mongo import Mongo

P = "mongo"


@pytest.fixture(scope="module")
def mongo(tracer_l7):
    s = Mongo()
    yield s
    s.stop()


def test_finds_paired_by_request_id(tracer_l7, mongo):
    n = 50
    secret = "e2e-secret-mongo-5a3b"
    c = mongo.client()
    for i in range(n):
        assert c.e2e.things.find_one({"owner": secret, "i": i}) == {"_id": 1}
    c.close()
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "e2e.things", inbound_=True)) >= n
                 and len(with_text(evs, P, "e2e.things", inbound_=False)) >= n, f"{n} finds, both sides")
    for side in (False, True):
        mine = with_text(evs, P, "e2e.things", inbound_=side)
        assert len(mine) == n, (side, len(mine))
        assert all(e["op"] == "find" and e["status"] == "ok" and e["duration_ns"] > 0 for e in mine), mine[:3]
    assert_secret_absent(tracer_l7, secret)


def test_failed_command_has_its_code(tracer_l7, mongo):
    before = Counts(tracer_l7, P, mongo)
    c = mongo.client()
    with pytest.raises(pymongo.errors.OperationFailure):
        c.e2e.missing.find_one()
    c.close()
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "e2e.missing")) >= 2, "the failed find")
    for side in (False, True):
        failed = with_text(evs, P, "e2e.missing", inbound_=side)
        assert len(failed) == 1 and (failed[0]["status"], failed[0].get("error_code")) == ("failed", "26"), failed
    assert wait_delta(tracer_l7, P, mongo, before, lambda c: c.out(status="failed"), 1) == 1
    assert wait_delta(tracer_l7, P, mongo, before, lambda c: c.inb(status="failed"), 1) == 1


def test_insert_with_a_document_sequence_is_one_request(tracer_l7, mongo):
    c = mongo.client()
    assert len(c.e2e.inserted.insert_many([{"k": i} for i in range(20)]).inserted_ids) == 20
    c.close()
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "e2e.inserted")) >= 2, "the insert")
    for side in (False, True):
        mine = with_text(evs, P, "e2e.inserted", inbound_=side)
        assert len(mine) == 1 and mine[0]["op"] == "insert" and mine[0]["status"] == "ok", mine
