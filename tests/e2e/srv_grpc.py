"""A private gRPC server (clients/grpc_server.py on Debian's python3-grpcio) on 127.0.0.1 for the
e2e tests, h2c or TLS, and its client (clients/grpc_client.py), which reports what it saw."""
import json
import os
import subprocess

from service import Service

CLIENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clients")
PYTHON = "/usr/bin/python3"  # Debian's, where python3-grpcio is installed


class GrpcServer(Service):
    def __init__(self, tls=False):
        super().__init__("grpc")
        argv = [PYTHON, os.path.join(CLIENTS, "grpc_server.py"), str(self.port)]
        self.crt = None
        if tls:
            key, self.crt = self.cert()
            argv += [self.crt, key]
        self.start(argv)

    def call(self, *calls):
        """Runs grpc_client.py with CALLs (see its usage); returns its {status: count}."""
        argv = [PYTHON, os.path.join(CLIENTS, "grpc_client.py"), self.addr]
        if self.crt:
            argv += ["--tls", self.crt]
        p = subprocess.run(argv + list(calls), capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)
