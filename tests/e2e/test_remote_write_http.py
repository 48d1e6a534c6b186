"""Remote write's HTTP side against small receivers written here: the protocol's headers and
Coroot's API key on every request, a batch refused with a 4xx dropped and counted (a 5xx is
retried), and https verified with --ca-file, refused without it, and not verified with
--insecure-skip-verify."""
import http.server
import os
import ssl
import subprocess
import threading

import pytest

from conftest import Agent

RW = "nodescope_remote_write_"


class Receiver:
    """A remote-write receiver on 127.0.0.1 that records each request's headers and body size
    and answers with the next of statuses (then 204)."""

    def __init__(self, statuses=(), tls_files=None):
        self.requests, self.statuses, self.lock = [], list(statuses), threading.Lock()
        rec = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with rec.lock:
                    rec.requests.append((dict(self.headers), len(body)))
                    status = rec.statuses.pop(0) if rec.statuses else 204
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls_files:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls_files)
            self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self):
        with self.lock:
            return len(self.requests)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def wait(pred, what, timeout=60):
    import time
    deadline = time.monotonic() + timeout
    while not (v := pred()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return v


def agent(tmp_path, url, *args):
    return Agent("--metrics-endpoint", url, "--scrape-interval", "1s",
                 "--wal-dir", str(tmp_path / "wal"), *args, trace=False)


def test_headers_api_key_and_rejected_batches(tmp_path):
    # First a 500 (retried: the batch stays), then a 400 (dropped: a retry is refused again).
    r = Receiver(statuses=[500, 400])
    a = agent(tmp_path, f"http://127.0.0.1:{r.port}/api/v1/write", "--api-key", "s3cret")
    try:
        wait(lambda: a.metric_sum(RW + "samples_sent_total") > 0, "a batch accepted")
        assert a.metric_sum(RW + "requests_failed_total") == 1
        assert a.metric(RW + "batches_dropped_total", reason="rejected") == 1
        assert a.metric(RW + "samples_dropped_total", reason="rejected") > 0
        with r.lock:
            reqs = list(r.requests)
        # The 500's batch was sent again, and refused with the 400.
        assert reqs[0][1] == reqs[1][1]
        for headers, size in reqs:
            assert size > 0
            assert headers["Content-Encoding"] == "snappy"
            assert headers["Content-Type"] == "application/x-protobuf"
            assert headers["X-Prometheus-Remote-Write-Version"] == "0.1.0"
            assert headers["X-Api-Key"] == "s3cret"
            assert headers["User-Agent"].startswith("nodescope/")
    finally:
        a.stop()
        r.close()


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("tls")
    key, crt = str(d / "key.pem"), str(d / "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True)
    return crt, key


@pytest.mark.parametrize("args,accepted", [
    (["--ca-file", "CERT"], True),
    ([], False),
    (["--insecure-skip-verify"], True),
])
def test_https_verification(tmp_path, cert, args, accepted):
    r = Receiver(tls_files=cert)
    args = [cert[0] if x == "CERT" else x for x in args]
    a = agent(tmp_path, f"https://127.0.0.1:{r.port}/api/v1/write", *args)
    try:
        if accepted:
            wait(lambda: a.metric_sum(RW + "samples_sent_total") > 0, "a batch over https")
            assert a.metric_sum(RW + "requests_failed_total") == 0
        else:
            wait(lambda: a.metric_sum(RW + "requests_failed_total") > 0, "a failed request")
            assert r.count() == 0  # nothing got past the handshake
            assert a.metric_sum(RW + "spool_batches") > 0
            assert "remote write" in a.stderr()
    finally:
        a.stop()
        r.close()
