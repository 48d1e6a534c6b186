#!/usr/bin/python3
"""A stand-in Cassandra node (Debian 12 has no Cassandra server), for the e2e tests (Cassandra(),
a Service: its own process and cgroup) and for the parser tests' captures
(tests/unit/data/l7/capture.sh).

srv_cassandra.py PORT [LOG]: answers what python3-cassandra sends, in protocol v4 or v5 (v5's
segments made by that library's own SegmentCodec): OPTIONS (SUPPORTED), STARTUP and REGISTER
(READY), QUERY (Void, Rows of one text column, SetKeyspace for USE; an ERROR 0x2200 for a
statement naming no_such_table, 0x2000 for one with a syntax error; the driver's own questions
about the node, system.local and system.peers, get one node's rows and none), PREPARE (Prepared,
its id an md5 of the statement), EXECUTE (Rows) and BATCH (Void). Responses are built from the
protocol's specification. LOG gets a JSON line per request read (opcode, stream, the statement of
a QUERY or PREPARE, or the prepared one an EXECUTE names; the answer's opcode and error code),
written before the answer is sent.
"""
import hashlib
import io
import struct
import sys

from cassandra.segment import SegmentCodec

from standin import RequestLog, accept_forever


def string(s):
    b = s.encode()
    return struct.pack(">H", len(b)) + b


def short_bytes(b):
    return struct.pack(">H", len(b)) + b


def rows_metadata(columns):
    out = struct.pack(">ii", 0x0001, len(columns)) + string("shop") + string("users")
    for name in columns:
        out += string(name) + struct.pack(">H", 0x000D)
    return out


def result(kind, body=b""):
    return struct.pack(">i", kind) + body


def rows():
    return result(2, rows_metadata(["name"]) + struct.pack(">i", 1) + struct.pack(">i", 1) + b"v")


def error(code, msg):
    return struct.pack(">i", code) + string(msg)


def typed_rows(table, columns, rows):
    """Rows of typed columns: columns [(name, type option bytes)], rows [[encoded value]]."""
    out = struct.pack(">ii", 0x0001, len(columns)) + string("system") + string(table)
    for name, typ in columns:
        out += string(name) + typ
    out += struct.pack(">i", len(rows))
    for row in rows:
        out += b"".join(struct.pack(">i", len(v)) + v for v in row)
    return result(2, out)


TEXT, UUID, INET = struct.pack(">H", 0x000D), struct.pack(">H", 0x000C), struct.pack(">H", 0x0010)
SET_TEXT = struct.pack(">HH", 0x0022, 0x000D)
LOCAL = [("key", TEXT, b"local"), ("cluster_name", TEXT, b"standin"), ("data_center", TEXT, b"dc1"),
         ("rack", TEXT, b"rack1"), ("partitioner", TEXT, b"org.apache.cassandra.dht.Murmur3Partitioner"),
         ("release_version", TEXT, b"4.0.0"), ("host_id", UUID, hashlib.md5(b"host").digest()),
         ("schema_version", UUID, hashlib.md5(b"schema").digest()), ("rpc_address", INET, bytes([127, 0, 0, 1])),
         ("tokens", SET_TEXT, struct.pack(">ii", 1, 1) + b"0")]


def system_rows(q):
    """The node's own rows for the driver's questions about the cluster, else None."""
    if "system.local" in q:
        return typed_rows("local", [c[:2] for c in LOCAL], [[c[2] for c in LOCAL]])
    if "system.peers" in q:
        return typed_rows("peers", [("peer", INET)], [])
    return None


def answer(version, op, body):
    """The opcode and body answering a request."""
    if op == 0x05:  # OPTIONS
        m = {"CQL_VERSION": ["3.4.5"], "COMPRESSION": [], "PROTOCOL_VERSIONS": ["4/v4", "5/v5"]}
        out = struct.pack(">H", len(m))
        for k, v in m.items():
            out += string(k) + struct.pack(">H", len(v)) + b"".join(string(x) for x in v)
        return 0x06, out
    if op in (0x01, 0x0B):  # STARTUP, REGISTER
        return 0x02, b""
    if op == 0x07:  # QUERY
        n = struct.unpack(">i", body[:4])[0]
        q = body[4:4 + n].decode()
        if "no_such_table" in q:
            return 0x00, error(0x2200, "unconfigured table no_such_table")
        if "SELEKT" in q:
            return 0x00, error(0x2000, "line 1:0 no viable alternative at input 'SELEKT'")
        if system_rows(q):
            return 0x08, system_rows(q)
        if q.upper().startswith("USE"):
            return 0x08, result(3, string("shop"))
        if q.upper().startswith("SELECT"):
            return 0x08, rows()
        return 0x08, result(1)
    if op == 0x09:  # PREPARE
        n = struct.unpack(">i", body[:4])[0]
        qid = hashlib.md5(body[4:4 + n]).digest()
        out = short_bytes(qid)
        if version >= 5:
            out += short_bytes(hashlib.md5(b"meta" + qid).digest())
        # variables: one, partition key index 0; result: no metadata
        out += struct.pack(">iii", 0x0001, 1, 1) + struct.pack(">H", 0)
        out += string("shop") + string("users") + string("id") + struct.pack(">H", 0x000D)
        out += struct.pack(">ii", 0x0004, 1)
        return 0x08, result(4, out)
    if op == 0x0A:  # EXECUTE
        return 0x08, rows()
    if op == 0x0D:  # BATCH
        return 0x08, result(1)
    return 0x00, error(0x000A, "unsupported opcode")


def statement(op, body, prepared):
    """What a request asks, for the log: a QUERY's or PREPARE's text, an EXECUTE's prepared one."""
    if op in (0x07, 0x09):
        n = struct.unpack(">i", body[:4])[0]
        return body[4:4 + n].decode()
    if op == 0x0A:
        n = struct.unpack(">H", body[:2])[0]
        return prepared.get(body[2:2 + n])
    return None


def record(log, prepared, op, stream, body, rop, rbody):
    if op == 0x09 and rop == 0x08:
        n = struct.unpack(">i", body[:4])[0]
        prepared[hashlib.md5(body[4:4 + n]).digest()] = body[4:4 + n].decode()
    code = "0x%04x" % struct.unpack(">i", rbody[:4])[0] if rop == 0x00 else None
    log.write(op=op, stream=stream, statement=statement(op, body, prepared), answer=rop, code=code)


def serve(c, log):
    """Answers a connection's requests; those read together are answered in reverse order, as a
    node may (each answer names its request's stream)."""
    buf = b""
    prepared = {}  # id -> statement, for the log
    segmented = False
    codec = SegmentCodec()

    def send(answers):
        out = b"".join(reversed(answers))
        if out and segmented:
            seg = io.BytesIO()
            codec.encode(seg, out)
            out = seg.getvalue()
        if out:
            c.sendall(out)

    while True:
        data = c.recv(65536)
        if not data:
            return
        buf += data
        answers = []
        while True:
            if segmented:
                if len(buf) < 6:
                    break
                hdr = codec.decode_header(io.BytesIO(buf[:6]))
                if len(buf) < 6 + hdr.payload_length + 4:
                    break
                env = buf[6:6 + hdr.payload_length]
                buf = buf[6 + hdr.payload_length + 4:]
            else:
                if len(buf) < 9:
                    break
                n = struct.unpack(">i", buf[5:9])[0]
                if len(buf) < 9 + n:
                    break
                env, buf = buf[:9 + n], buf[9 + n:]
            while env:
                version, flags, stream, op, n = struct.unpack(">BBhBi", env[:9])
                body, env = env[9:9 + n], env[9 + n:]
                rop, rbody = answer(version, op, body)
                record(log, prepared, op, stream, body, rop, rbody)
                answers.append(struct.pack(">BBhBi", 0x80 | version, 0, stream, rop, len(rbody)) + rbody)
                if op == 0x01 and version >= 5:
                    # READY goes as it is; after it everything is in segments
                    send(answers)
                    answers = []
                    segmented = True
        send(answers)


if __name__ == "__main__":
    accept_forever(int(sys.argv[1]), serve, RequestLog(sys.argv[2] if len(sys.argv) > 2 else None))
else:
    from service import StandIn

    def Cassandra():
        """The stand-in on a free port."""
        return StandIn("cassandra-standin", __file__, "{port}")
