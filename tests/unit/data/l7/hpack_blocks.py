#!/usr/bin/python3
"""Writes hpack_blocks.txt for test_l7_hpack.c: header blocks made by Debian's python3-hpack encoder.

Two connections' worth of blocks (one direction each), with and without Huffman coding, a small
table (256 bytes, so entries are evicted), a size update, never-indexed fields and long values.
Each block is a line "B <hex>" followed by its fields, "H <name>: <value>".
"""
from hpack import Encoder

out = []


def emit(enc, headers, huffman=True, sensitive=()):
    hs = [(n, v, n in sensitive) if sensitive else (n, v) for n, v in headers]
    block = enc.encode(hs, huffman=huffman)
    out.append("B " + block.hex())
    for n, v in headers:
        out.append("H %s: %s" % (n, v))


e = Encoder()
emit(e, [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")])
emit(e, [(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"),
         ("cache-control", "no-cache")])
emit(e, [(":method", "POST"), (":scheme", "https"), (":path", "/api/v1/orders?id=42"),
         (":authority", "www.example.com"), ("custom-key", "custom-value"),
         ("content-type", "application/grpc"), ("te", "trailers")], huffman=False)
emit(e, [(":method", "GET"), (":path", "/api/v1/orders?id=43"), ("authorization", "Bearer secret-token"),
         ("user-agent", "x" * 300)], sensitive=("authorization",))
e = Encoder()
e.header_table_size = 256
emit(e, [(":status", "302"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
         ("location", "https://www.example.com")])
emit(e, [(":status", "307"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
         ("location", "https://www.example.com")])
emit(e, [(":status", "200"), ("cache-control", "private"), ("date", "Mon, 21 Oct 2013 20:13:22 GMT"),
         ("location", "https://www.example.com"), ("content-encoding", "gzip"),
         ("set-cookie", "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1")])
emit(e, [("grpc-status", "16"), ("grpc-message", "missing token")])
print("\n".join(out))
