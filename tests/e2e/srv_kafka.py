#!/usr/bin/python3
"""A stand-in Kafka broker (Debian 12 has no Kafka server), for the e2e tests (Kafka(), a Service:
its own process and cgroup) and for the parser tests' captures (tests/unit/data/l7/capture.sh).

srv_kafka.py PORT [ADVERTISED_PORT [LOG]]: answers the requests python3-kafka sends (ApiVersions,
Metadata, Produce, Fetch, ListOffsets, FindCoordinator) with responses encoded by python3-kafka's
own protocol classes, so both directions are that library's bytes. One broker (node 0, on
ADVERTISED_PORT: a capture proxy's, so the client's later connections go through it too), topics
"events" and "full" with one partition each; any other topic is unknown (error 3); a Produce to
"full" fails with MESSAGE_TOO_LARGE (10). Fetch answers carry no records, after the request's max
wait (at most 0.5 s) as a broker with none to give. LOG gets a JSON line per request read (api
key, correlation id, first topic, whether it was answered), written before its answer is sent.
"""
import struct
import sys
import time

from kafka.protocol.admin import ApiVersionResponse
from kafka.protocol.commit import GroupCoordinatorResponse
from kafka.protocol.fetch import FetchRequest, FetchResponse
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.offset import OffsetRequest, OffsetResponse
from kafka.protocol.produce import ProduceRequest, ProduceResponse

from standin import RequestLog, accept_forever

ADVERTISED = 0  # set from the command line
TOPICS = ("events", "full")
VERSIONS = [(0, 0, 7), (1, 0, 10), (2, 0, 2), (3, 0, 5), (10, 0, 1), (18, 0, 1)]


def metadata(ver, req):
    names = [t for t in (req.topics or TOPICS)]
    topics = []
    for t in names:
        err = 0 if t in TOPICS else 3
        parts = [(0, 0, 0, [0], [0], [])] if not err else []
        if ver < 5:
            parts = [p[:5] for p in parts]
        topics.append((err, t, False, parts) if ver >= 1 else (err, t, parts))
    brokers = [(0, "127.0.0.1", ADVERTISED, None) if ver >= 1 else (0, "127.0.0.1", ADVERTISED)]
    if ver == 0:
        return MetadataResponse[0](brokers, topics)
    if ver == 1:
        return MetadataResponse[1](brokers, 0, topics)
    if ver == 2:
        return MetadataResponse[2](brokers, "standin", 0, topics)
    return MetadataResponse[ver](0, brokers, "standin", 0, topics)


def produce(ver, req):
    topics = []
    for t, parts in req.topics:
        err = 0 if t == "events" else 10 if t == "full" else 3
        p = [(i, err, 7 if not err else -1) + ((-1,) if ver >= 2 else ()) + ((0,) if ver >= 5 else ())
             for i, _ in parts]
        topics.append((t, p))
    return ProduceResponse[ver](topics, 0) if ver >= 1 else ProduceResponse[0](topics)


def fetch(ver, req):
    topics = []
    for t, parts in req.topics:
        err = 0 if t in TOPICS else 3
        ps = []
        for p in parts:
            if ver >= 5:
                ps.append((p[0], err, 0, 0, 0, [], b""))
            elif ver >= 4:
                ps.append((p[0], err, 0, 0, [], b""))
            else:
                ps.append((p[0], err, 0, b""))
        topics.append((t, ps))
    if ver >= 7:
        return FetchResponse[ver](0, 0, 0, topics)
    return FetchResponse[ver](0, topics) if ver >= 1 else FetchResponse[0](topics)


def offsets(ver, req):
    topics = [(t, [(p[0], 0, -1, 0) if ver >= 1 else (p[0], 0, [0]) for p in parts])
              for t, parts in req.topics]
    return OffsetResponse[ver](0, topics) if ver >= 2 else OffsetResponse[ver](topics)


def answer(key, ver, body):
    if key == 18:
        return ApiVersionResponse[ver](0, VERSIONS, *([0] if ver >= 1 else []))
    if key == 3:
        return metadata(ver, MetadataRequest[ver].decode(body))
    if key == 0:
        return produce(ver, ProduceRequest[ver].decode(body))
    if key == 1:
        req = FetchRequest[ver].decode(body)
        time.sleep(min(req.max_wait_time, 500) / 1000)  # a broker waits for records that long
        return fetch(ver, req)
    if key == 2:
        return offsets(ver, OffsetRequest[ver].decode(body))
    if key == 10:
        return GroupCoordinatorResponse[ver](*([0] if ver >= 1 else []), 15, *([None] if ver >= 1 else []),
                                             -1, "", -1)
    return None


def first_topic(key, ver, body):
    """The first topic of a Produce, Fetch or Metadata request, for the log."""
    try:
        req = {0: ProduceRequest, 1: FetchRequest, 3: MetadataRequest}[key][ver].decode(body)
        t = req.topics[0] if req.topics else None
        return t if isinstance(t, str) or t is None else t[0]
    except (KeyError, IndexError):
        return None


def serve(c, log):
    buf = b""
    while True:
        data = c.recv(65536)
        if not data:
            return
        buf += data
        while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">i", buf[:4])[0]:
            n = struct.unpack(">i", buf[:4])[0]
            msg, buf = buf[4:4 + n], buf[4 + n:]
            key, ver, corr, cl = struct.unpack(">hhih", msg[:10])
            body = msg[10 + max(cl, 0):]
            noreply = False
            if key == 0:
                off = 2 + max(struct.unpack(">h", body[:2])[0], 0) if ver >= 3 else 0
                noreply = struct.unpack(">h", body[off:off + 2])[0] == 0  # acks=0: no answer
            resp = None if noreply else answer(key, ver, body)
            log.write(key=key, ver=ver, corr=corr, topic=first_topic(key, ver, body), answered=resp is not None)
            if resp is None:
                continue
            out = struct.pack(">i", corr) + resp.encode()
            c.sendall(struct.pack(">i", len(out)) + out)


if __name__ == "__main__":
    ADVERTISED = int(sys.argv[2]) if len(sys.argv) > 2 else int(sys.argv[1])
    accept_forever(int(sys.argv[1]), serve, RequestLog(sys.argv[3] if len(sys.argv) > 3 else None))
else:
    from service import StandIn

    def Kafka():
        """The stand-in on a free port, advertising itself."""
        return StandIn("kafka-standin", __file__, "{port}", "{port}")
