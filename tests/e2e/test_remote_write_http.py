"""Remote write's HTTP side against small receivers written here: the protocol's headers and
Coroot's API key on every request, a batch refused with a 4xx dropped and counted (a 5xx is
retried), and https verified with --ca-file, refused without it, and not verified with
--insecure-skip-verify."""
import subprocess

import pytest

from conftest import wait_until
from receiver import PostReceiver  # tests/receiver.py
from test_remote_write import RW, rw_agent


class Receiver(PostReceiver):
    """A remote-write receiver on 127.0.0.1 that answers with the next of statuses (then 204)."""

    def __init__(self, statuses=(), tls_files=None):
        self.statuses = list(statuses)
        super().__init__(lambda *request: self.statuses.pop(0) if self.statuses else 204,
                         tls_files=tls_files)


def test_headers_api_key_and_rejected_batches(tmp_path):
    # First a 500 (retried: the batch stays), then a 400 (dropped: a retry is refused again).
    r = Receiver(statuses=[500, 400])
    a = rw_agent(tmp_path, f"http://127.0.0.1:{r.port}/api/v1/write", "--api-key", "s3cret")
    try:
        wait_until(lambda: a.metric_sum(RW + "samples_sent_total") > 0, "a batch accepted",
                   timeout=60)
        assert a.metric_sum(RW + "requests_failed_total") == 1
        assert a.metric(RW + "batches_dropped_total", reason="rejected") == 1
        assert a.metric(RW + "samples_dropped_total", reason="rejected") > 0
        reqs = r.seen()
        # The 500's batch was sent again, and refused with the 400.
        assert reqs[0][2] == reqs[1][2]
        for _, headers, size in reqs:
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
    a = rw_agent(tmp_path, f"https://127.0.0.1:{r.port}/api/v1/write", *args)
    try:
        if accepted:
            wait_until(lambda: a.metric_sum(RW + "samples_sent_total") > 0, "a batch over https",
                       timeout=60)
            assert a.metric_sum(RW + "requests_failed_total") == 0
        else:
            wait_until(lambda: a.metric_sum(RW + "requests_failed_total") > 0, "a failed request",
                       timeout=60)
            assert r.seen() == []  # nothing got past the handshake
            assert a.metric_sum(RW + "spool_batches") > 0
            assert "remote write" in a.stderr()
    finally:
        a.stop()
        r.close()
