"""A private nghttpd (Debian's nghttp2-server package) on 127.0.0.1 for the e2e tests: HTTP/2 in
cleartext (h2c) or inside TLS, serving index.html ("hello\n")."""
from service import Service, need


class Nghttpd(Service):
    def __init__(self, tls=False):
        super().__init__("nghttpd")
        self.write("index.html", "hello\n")
        argv = [need("nghttpd", "nghttp2-server"), "-d", self.dir, str(self.port)]
        if tls:
            argv += list(self.cert())
        else:
            argv.insert(1, "--no-tls")
        self.start(argv)
