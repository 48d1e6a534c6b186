#!/usr/bin/python3
"""Usage: grpc_client.py HOST:PORT [--tls CERT] CALL...

Calls grpc_server.py's nodescope.Echo over one channel (one HTTP/2 connection), with Debian's
python3-grpcio and no generated code. Each CALL is KIND:COUNT, or unary:STATUS:COUNT for unary
calls the server ends with STATUS (OK, NOT_FOUND, INTERNAL, ...); KIND is unary, server_stream,
client_stream or bidi. Streaming calls send and receive three messages where they stream. With
--tls CERT the channel is TLS, CERT (CN localhost) the trusted root.

Prints, as JSON, how many calls ended with each status, as the client saw them, labelled as
Coroot labels gRPC calls: {"grpc:OK": 12, "grpc:NOT_FOUND": 2}.
"""
import json
import sys

import grpc

SERVICE = "/nodescope.Echo/"


def raw(b):
    return b


def status_of(call):
    """Runs call() and returns the status it ended with."""
    try:
        call()
        return grpc.StatusCode.OK
    except grpc.RpcError as e:
        return e.code()


def main(argv):
    args = argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    target = args.pop(0)
    if args[:1] == ["--tls"]:
        with open(args[1], "rb") as f:
            creds = grpc.ssl_channel_credentials(root_certificates=f.read())
        channel = grpc.secure_channel(target, creds, options=(("grpc.ssl_target_name_override", "localhost"),))
        args = args[2:]
    else:
        channel = grpc.insecure_channel(target)
    stubs = {
        "unary": channel.unary_unary(SERVICE + "Unary", raw, raw),
        "server_stream": channel.unary_stream(SERVICE + "ServerStream", raw, raw),
        "client_stream": channel.stream_unary(SERVICE + "ClientStream", raw, raw),
        "bidi": channel.stream_stream(SERVICE + "Bidi", raw, raw),
    }
    msgs = lambda: iter([b"a", b"b", b"c"])
    calls = {
        "server_stream": lambda: list(stubs["server_stream"](b"x", timeout=30)),
        "client_stream": lambda: stubs["client_stream"](msgs(), timeout=30),
        "bidi": lambda: list(stubs["bidi"](msgs(), timeout=30)),
    }
    seen = {}
    for spec in args:
        parts = spec.split(":")
        kind, count = parts[0], int(parts[-1])
        if kind == "unary":
            want = parts[1]
            req = b"hello" if want == "OK" else b"fail:" + want.encode()
            call = lambda: stubs["unary"](req, timeout=30)
        else:
            call = calls[kind]
        for _ in range(count):
            label = "grpc:" + status_of(call).name
            seen[label] = seen.get(label, 0) + 1
    channel.close()
    print(json.dumps(seen), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
