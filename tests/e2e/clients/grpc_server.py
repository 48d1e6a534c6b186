#!/usr/bin/python3
"""Usage: grpc_server.py PORT [CERT KEY]

A gRPC server for the e2e tests and bench/http on Debian's python3-grpcio, with no generated code:
a generic handler whose messages are raw bytes. Service nodescope.Echo:
  Unary         answers the request; a request "fail:NAME" ends with status NAME (NOT_FOUND, ...)
  ServerStream  answers three messages
  ClientStream  reads every message, answers one
  Bidi          answers each message
h2c on 127.0.0.1:PORT, or TLS with CERT and KEY. Prints "listening" once it accepts connections;
SIGTERM or SIGINT stops it (exit 0).
"""
import signal
import sys
import threading
from concurrent import futures

import grpc

SERVICE = "nodescope.Echo"


def raw(b):
    return b


def unary(request, context):
    if request.startswith(b"fail:"):
        context.abort(grpc.StatusCode[request[5:].decode()], "failed as asked")
    return request


def server_stream(request, context):
    for i in range(3):
        yield request + b"%d" % i


def client_stream(requests, context):
    return b"".join(requests)[:64]


def bidi(requests, context):
    for r in requests:
        yield r


def main(argv):
    if len(argv) not in (2, 4):
        print(__doc__, file=sys.stderr)
        return 2
    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary, raw, raw),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream, raw, raw),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream, raw, raw),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi, raw, raw),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
    addr = f"127.0.0.1:{argv[1]}"
    if len(argv) == 4:
        with open(argv[2], "rb") as c, open(argv[3], "rb") as k:
            creds = grpc.ssl_server_credentials(((k.read(), c.read()),))
        server.add_secure_port(addr, creds)
    else:
        server.add_insecure_port(addr)
    server.start()
    done = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: done.set())
    print("listening", flush=True)
    done.wait()
    server.stop(0).wait()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
