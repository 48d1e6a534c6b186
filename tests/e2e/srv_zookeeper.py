"""A private ZooKeeper (Debian's zookeeper package, standalone) on 127.0.0.1 for the e2e tests."""
import os

import pytest

from service import Service, need

JAR = "/usr/share/java/zookeeper.jar"


class ZooKeeper(Service):
    def __init__(self):
        if not os.path.exists(JAR):
            pytest.fail("zookeeper is missing: apt-get install zookeeperd (scripts/install-deps.sh)")
        super().__init__("zookeeper")
        cfg = self.write("zoo.cfg", f"tickTime=2000\ndataDir={self.path('data')}\nclientPort={self.port}\n"
                                    "clientPortAddress=127.0.0.1\nadmin.enableServer=false\n")
        self.start([need("java", "default-jre-headless"), "-cp", f"/etc/zookeeper/conf:{JAR}",
                    "org.apache.zookeeper.server.ZooKeeperServerMain", cfg])
