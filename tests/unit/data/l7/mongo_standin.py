"""A stand-in for mongod for capture.sh: answers pymongo's handshake and commands
with replies made by bson (find: one document; insert: n; drop: ok 0, code 26). Argument: the port."""
import socket, struct, sys, threading, bson
OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013
HELLO = {"ismaster": True, "helloOk": True, "maxWireVersion": 17, "minWireVersion": 0,
         "maxBsonObjectSize": 16777216, "maxMessageSizeBytes": 48000000, "maxWriteBatchSize": 100000,
         "localTime": None, "logicalSessionTimeoutMinutes": 30, "connectionId": 1, "readOnly": False, "ok": 1.0}
ids = [1000]
def reply_msg(to, doc):
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(doc)
    ids[0] += 1
    return struct.pack("<iiii", 16 + len(body), ids[0], to, OP_MSG) + body
def reply_legacy(to, doc):
    body = struct.pack("<iqii", 0, 0, 0, 1) + bson.encode(doc)
    ids[0] += 1
    return struct.pack("<iiii", 16 + len(body), ids[0], to, OP_REPLY) + body
def answer(doc):
    import datetime
    cmd = next(iter(doc))
    if cmd.lower() in ("hello", "ismaster"):
        d = dict(HELLO); d["localTime"] = datetime.datetime.utcnow(); return d
    if cmd == "find":
        return {"cursor": {"firstBatch": [{"_id": 1, "name": "x"}], "id": 0, "ns": "db.users"}, "ok": 1.0}
    if cmd == "insert":
        return {"n": 2, "ok": 1.0}
    if cmd == "drop":
        return {"ok": 0.0, "errmsg": "ns not found", "code": 26, "codeName": "NamespaceNotFound"}
    return {"ok": 1.0}
def serve(c):
    buf = b""
    while True:
        while len(buf) < 16 or len(buf) < struct.unpack("<i", buf[:4])[0]:
            d = c.recv(65536)
            if not d:
                return
            buf += d
        n, rid, to, op = struct.unpack("<iiii", buf[:16])
        msg, buf = buf[:n], buf[n:]
        if op == OP_QUERY:
            z = msg.index(b"\x00", 20)
            doc = bson.decode(msg[z + 9:])
            c.sendall(reply_legacy(rid, answer(doc)))
        elif op == OP_MSG:
            flags = struct.unpack("<I", msg[16:20])[0]
            doc = bson.decode(msg[21:21 + struct.unpack("<i", msg[21:25])[0]])
            if not flags & 2:
                c.sendall(reply_msg(rid, answer(doc)))
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
