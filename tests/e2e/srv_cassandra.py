#!/usr/bin/python3
"""A stand-in Cassandra node for the parser tests' captures (Debian 12 has no Cassandra server).

cql_standin.py PORT: answers what python3-cassandra's connection sends, in protocol v4 or v5
(v5's segments made by that library's own SegmentCodec): OPTIONS (SUPPORTED), STARTUP and
REGISTER (READY), QUERY (Void, Rows of one text column, SetKeyspace for USE; an ERROR 0x2200 for
a statement naming no_such_table, 0x2000 for one with a syntax error), PREPARE (Prepared, its id
an md5 of the statement), EXECUTE (Rows) and BATCH (Void). Responses are built from the
protocol's specification.
"""
import hashlib
import io
import socket
import struct
import sys
import threading

from cassandra.segment import SegmentCodec


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


def serve(c):
    buf = b""
    segmented = False
    codec = SegmentCodec()
    while True:
        data = c.recv(65536)
        if not data:
            return
        buf += data
        while True:
            if segmented:
                if len(buf) < 6:
                    break
                hdr = codec.decode_header(io.BytesIO(buf[:6]))
                if len(buf) < 6 + hdr.payload_length + 4:
                    break
                payload = buf[6:6 + hdr.payload_length]
                buf = buf[6 + hdr.payload_length + 4:]
                envelopes = [payload]
            else:
                if len(buf) < 9:
                    break
                n = struct.unpack(">i", buf[5:9])[0]
                if len(buf) < 9 + n:
                    break
                envelopes, buf = [buf[:9 + n]], buf[9 + n:]
            out = b""
            for env in envelopes:
                while env:
                    version, flags, stream, op, n = struct.unpack(">BBhBi", env[:9])
                    body, env = env[9:9 + n], env[9 + n:]
                    rop, rbody = answer(version, op, body)
                    out += struct.pack(">BBhBi", 0x80 | version, 0, stream, rop, len(rbody)) + rbody
                    if op == 0x01 and version >= 5:
                        # READY goes as it is; after it everything is in segments
                        c.sendall(out)
                        out = b""
                        segmented = True
            if out:
                if segmented:
                    seg = io.BytesIO()
                    codec.encode(seg, out)
                    out = seg.getvalue()
                c.sendall(out)


def main():
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", int(sys.argv[1])))
    ls.listen(8)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
