"""What the stand-in servers of the protocols Debian 12 has no server for share (srv_kafka.py,
srv_cassandra.py), run as scripts: a thread per connection, and a log of the requests they read
(service.StandIn starts one and reads its log)."""
import json
import socket
import threading


class RequestLog:
    """A JSON line per request read, flushed before its answer is sent, so a client that has all
    its answers finds every request in the log. path None: nothing written."""

    def __init__(self, path=None):
        self.f = open(path, "a") if path else None
        self.lock = threading.Lock()

    def write(self, **fields):
        if self.f:
            with self.lock:
                self.f.write(json.dumps(fields) + "\n")
                self.f.flush()


def accept_forever(port, serve, *args):
    """Listens on 127.0.0.1:port and runs serve(connection, *args) in a thread per connection."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(64)
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,) + args, daemon=True).start()
