"""A tiny MongoDB wire-protocol responder for the e2e tests (Debian 12 has no MongoDB server):
enough for python3-pymongo to complete its handshake (isMaster over OP_QUERY, answered with
OP_REPLY) and commands over OP_MSG (find answers one document; a find on the collection
"missing" fails with code 26, NamespaceNotFound). Run as a script in its own process and cgroup
(Mongo(), a Service), so the client's bytes are pymongo's own and both sides are real sockets."""
import socket
import struct
import sys
import threading

OP_REPLY, OP_QUERY, OP_MSG = 1, 2004, 2013


def serve(port):
    import bson
    lsn = socket.socket()
    lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsn.bind(("127.0.0.1", port))
    lsn.listen(64)
    ids = iter(range(1, 1 << 30))

    def answer(cmd):
        name = next(iter(cmd))
        if name.lower() in ("ismaster", "hello"):
            return {"ismaster": True, "maxWireVersion": 8, "minWireVersion": 0, "maxBsonObjectSize": 16 << 20,
                    "maxMessageSizeBytes": 48 << 20, "maxWriteBatchSize": 100000,
                    "logicalSessionTimeoutMinutes": 30, "ok": 1.0}
        if name == "find":
            if cmd["find"] == "missing":
                return {"ok": 0.0, "errmsg": "ns does not exist", "code": 26, "codeName": "NamespaceNotFound"}
            return {"cursor": {"id": bson.int64.Int64(0), "ns": f"{cmd.get('$db')}.{cmd['find']}",
                               "firstBatch": [{"_id": 1}]}, "ok": 1.0}
        if name == "insert":
            return {"n": len(cmd.get("documents", [])), "ok": 1.0}
        return {"ok": 1.0}

    def conn(s):
        f = s.makefile("rb")
        while True:
            head = f.read(16)
            if len(head) < 16:
                return
            length, req_id, _, op = struct.unpack("<iiii", head)
            body = f.read(length - 16)
            if op == OP_QUERY:
                end = body.index(b"\0", 4)
                cmd = bson.decode(body[end + 9:])
                doc = bson.encode(answer(cmd))
                payload = struct.pack("<iqii", 0, 0, 0, 1) + doc
                rop = OP_REPLY
            elif op == OP_MSG:
                flags, = struct.unpack_from("<I", body)
                off, cmd = 4, None
                while off < len(body) - (4 if flags & 1 else 0):
                    kind = body[off]
                    off += 1
                    size, = struct.unpack_from("<i", body, off)
                    if kind == 0:
                        cmd = bson.decode(body[off:off + size])
                    elif cmd is not None:  # a document sequence (insert's documents)
                        ident_end = body.index(b"\0", off + 4)
                        key = body[off + 4:ident_end].decode()
                        docs, p = [], ident_end + 1
                        while p < off + size:
                            n, = struct.unpack_from("<i", body, p)
                            docs.append(bson.decode(body[p:p + n]))
                            p += n
                        cmd[key] = docs
                    off += size
                if flags & 2:  # moreToCome: no answer
                    continue
                payload = struct.pack("<I", 0) + b"\0" + bson.encode(answer(cmd))
                rop = OP_MSG
            else:
                return
            s.sendall(struct.pack("<iiii", 16 + len(payload), next(ids), req_id, rop) + payload)

    while True:
        s, _ = lsn.accept()
        threading.Thread(target=conn, args=(s,), daemon=True).start()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
else:
    from service import Service

    class Mongo(Service):
        def __init__(self):
            super().__init__("mongo-responder")
            self.start([sys.executable, __file__, str(self.port)])

        def client(self):
            import pymongo
            return pymongo.MongoClient("127.0.0.1", self.port, serverSelectionTimeoutMS=10000,
                                       directConnection=True, retryReads=False, retryWrites=False)
