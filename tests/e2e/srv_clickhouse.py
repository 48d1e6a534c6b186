"""A private ClickHouse (Debian's clickhouse-server package) for the e2e tests: a minimal config
in a temporary directory (native protocol and HTTP on free ports of 127.0.0.1, data and logs in
the directory, the package's users.xml), run as the clickhouse user in the foreground."""
import shutil

from conftest import free_port
from service import Service, need

CONFIG = """<?xml version="1.0"?>
<yandex>
    <logger><level>information</level><log>{d}/server.log</log><errorlog>{d}/error.log</errorlog>
        <console>0</console></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>{port}</tcp_port>
    <http_port>{http_port}</http_port>
    <path>{d}/data/</path>
    <tmp_path>{d}/tmp/</tmp_path>
    <user_files_path>{d}/user_files/</user_files_path>
    <format_schema_path>{d}/format_schemas/</format_schema_path>
    <users_config>{d}/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>5368709</mark_cache_size>
    <max_concurrent_queries>20</max_concurrent_queries>
</yandex>
"""


class ClickHouse(Service):
    def __init__(self):
        super().__init__("clickhouse", user="clickhouse")
        self.http_port = free_port()
        shutil.copy("/etc/clickhouse-server/users.xml", self.path("users.xml"))
        self.chown(self.path("users.xml"))
        conf = self.write("config.xml", CONFIG.format(d=self.dir, port=self.port, http_port=self.http_port))
        self.start([need("/usr/sbin/clickhouse-server", "clickhouse-server"), f"--config-file={conf}"],
                   timeout=120)

    def logs(self, *extra):
        return super().logs(self.path("error.log"), *extra)
