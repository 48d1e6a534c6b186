"""A private memcached (Debian's memcached package) for the e2e tests, run as the memcache user on
127.0.0.1 (TCP only)."""
from service import Service, need


class Memcached(Service):
    def __init__(self):
        super().__init__("memcached", user="memcache")
        self.start([need("memcached", "memcached"), "-l", "127.0.0.1", "-p", str(self.port), "-U", "0",
                    "-m", "64", "-t", "2"])

    def client(self, **kw):
        from pymemcache.client.base import Client
        return Client(("127.0.0.1", self.port), **kw)

    def stats(self):
        """The server's own counters ("cmd_get", "cmd_set", "get_hits", ...) as ints where they are."""
        c = self.client()
        try:
            return {k.decode(): v for k, v in c.stats().items()}
        finally:
            c.close()
