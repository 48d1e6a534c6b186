"""A private redis-server (Debian's redis-server package) for the e2e tests: no persistence, its
working directory temporary, run as the redis user on 127.0.0.1, with a TLS port too (Debian's
build links OpenSSL) on a self-signed certificate."""
from service import Service, need, port_open


class Redis(Service):
    def __init__(self, tls=True):
        super().__init__("redis", user="redis")
        self.tls_port = None
        argv = [need("redis-server", "redis-server"), "--bind", "127.0.0.1", "--port", str(self.port),
                "--dir", self.dir, "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--protected-mode", "no", "--logfile", "",
                "--unixsocket", self.path("redis.sock")]
        if tls:
            from conftest import free_port
            key, crt = self.cert()
            self.tls_port = free_port()
            argv += ["--tls-port", str(self.tls_port), "--tls-cert-file", crt, "--tls-key-file", key,
                     "--tls-ca-cert-file", crt, "--tls-auth-clients", "no"]
        self.start(argv, ready=lambda: port_open(self.port) and (not tls or port_open(self.tls_port)))

    def client(self, tls=False, **kw):
        import redis
        if tls:
            return redis.Redis(host="127.0.0.1", port=self.tls_port, ssl=True, ssl_cert_reqs=None, **kw)
        return redis.Redis(host="127.0.0.1", port=self.port, **kw)

    def commandstats(self):
        """INFO commandstats: {command: calls}, asked over the unix socket (which the agent, tracing
        TCP, does not see; the INFO itself is counted once it has run)."""
        import redis
        c = redis.Redis(unix_socket_path=self.path("redis.sock"))
        try:
            return {k.split("_", 1)[1]: v["calls"] for k, v in c.info("commandstats").items()}
        finally:
            c.close()
