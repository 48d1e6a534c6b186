"""The HTTP side of the tests' remote-write receivers (e2e, packaging): each POST's path, headers
and body size kept, each answered with the status the test's function gives, over TLS when given
a certificate and key. Standard library only."""

import http.server
import socket
import ssl
import threading


class PostReceiver:
    """answer(path, headers, body) -> the HTTP status to answer with. sock: a listening socket
    (one made elsewhere, in another network namespace say); by default a new one on 127.0.0.1.
    Listens at .port."""

    def __init__(self, answer, sock=None, tls_files=None):
        self.requests, self.lock = [], threading.Lock()
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with rec.lock:
                    rec.requests.append((self.path, dict(self.headers), len(body)))
                self.send_response(answer(self.path, self.headers, body))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        sock = sock or socket.create_server(("127.0.0.1", 0))
        if tls_files:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls_files)
            sock = ctx.wrap_socket(sock, server_side=True)
        self.port = sock.getsockname()[1]
        self.server = http.server.ThreadingHTTPServer(sock.getsockname(), Handler,
                                                      bind_and_activate=False)
        self.server.socket.close()
        self.server.socket = sock
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def seen(self):
        """(path, headers, body size) of every request so far."""
        with self.lock:
            return list(self.requests)

    def close(self):
        self.server.shutdown()
        self.server.server_close()
