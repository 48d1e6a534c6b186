"""A private rabbitmq-server (Debian's package) on 127.0.0.1 for the e2e tests: its node name,
ports (AMQP, distribution, its own epmd), data and logs all the test's own."""
import os
import subprocess

from conftest import free_port
from service import Service, need


class RabbitMQ(Service):
    def __init__(self):
        super().__init__("rabbitmq")
        os.makedirs(self.path("home"))
        self.write("plugins", "[].\n")
        self.write("rabbitmq.conf", "loopback_users = none\n")
        self.env = dict(os.environ, HOME=self.path("home"), RABBITMQ_NODENAME=f"nodescope{self.port}@localhost",
                        RABBITMQ_NODE_IP_ADDRESS="127.0.0.1", RABBITMQ_NODE_PORT=str(self.port),
                        RABBITMQ_DIST_PORT=str(free_port()), ERL_EPMD_PORT=str(free_port()),
                        RABBITMQ_MNESIA_BASE=self.path("mnesia"), RABBITMQ_LOG_BASE=self.path("log"),
                        RABBITMQ_ENABLED_PLUGINS_FILE=self.path("plugins"),
                        RABBITMQ_CONFIG_FILE=self.path("rabbitmq"))
        self.start([need("/usr/lib/rabbitmq/bin/rabbitmq-server", "rabbitmq-server")], timeout=90, env=self.env)

    def stop(self, *a, **kw):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        # the epmd the server started for itself is a daemon of its own, in the server's cgroup
        subprocess.run([need("epmd", "erlang-base"), "-kill"], env=self.env, capture_output=True)
        super().stop(*a, **kw)
