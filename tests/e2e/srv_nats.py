"""A private nats-server (Debian's nats-server package) on 127.0.0.1 for the e2e tests."""
from service import Service, need


class Nats(Service):
    def __init__(self):
        super().__init__("nats")
        self.start([need("nats-server", "nats-server"), "-a", "127.0.0.1", "-p", str(self.port)])
