"""A private PostgreSQL (Debian's postgresql package) for the e2e tests: initdb into a temporary
directory, the postmaster in the foreground as the postgres user on 127.0.0.1, with SSL (a
self-signed certificate, for sslmode=require) and pg_stat_statements (the server's own count of
the statements each role ran). stop() shuts it down fast and removes the directory."""
import glob
import os
import signal

from service import Service, need


def pg_bin(name):
    """A server program from the newest installed major version (they are not on PATH)."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                   key=lambda p: int(p.split("/")[4]))
    return need(found[-1] if found else name, "postgresql")


class Postgres(Service):
    def __init__(self):
        super().__init__("postgres", user="postgres")
        data = self.path("data")
        self.run([pg_bin("initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync"])
        key, crt = self.cert()
        conf = {
            "listen_addresses": "'127.0.0.1'",
            "port": self.port,
            "unix_socket_directories": f"'{self.dir}'",
            "ssl": "on",
            "ssl_cert_file": f"'{crt}'",
            "ssl_key_file": f"'{key}'",
            "shared_preload_libraries": "'pg_stat_statements'",
            "pg_stat_statements.track": "top",
            "fsync": "off",
            "max_connections": 50,
        }
        with open(os.path.join(data, "postgresql.conf"), "a") as f:
            f.writelines(f"{k} = {v}\n" for k, v in conf.items())
        self.start([pg_bin("postgres"), "-D", data], ready=self._accepts)
        self.sql("CREATE EXTENSION pg_stat_statements")

    def _accepts(self):
        import psycopg2
        try:
            psycopg2.connect(self.dsn(), connect_timeout=2).close()
            return True
        except psycopg2.OperationalError:
            return False

    def dsn(self, user="postgres", sslmode="disable", dbname="postgres"):
        return f"host=127.0.0.1 port={self.port} user={user} dbname={dbname} sslmode={sslmode}"

    def env(self, user="postgres", sslmode="disable"):
        """libpq's environment for the command-line clients (psql, pgbench)."""
        return dict(os.environ, PGHOST="127.0.0.1", PGPORT=str(self.port), PGUSER=user,
                    PGDATABASE="postgres", PGSSLMODE=sslmode)

    def sql(self, query, args=None):
        """Runs one statement on a connection of its own (autocommit) over the unix socket, so the
        agent does not see it (it traces TCP); returns its rows, if any."""
        import psycopg2
        c = psycopg2.connect(host=self.dir, port=self.port, user="postgres", dbname="postgres")
        try:
            c.autocommit = True
            with c.cursor() as cur:
                cur.execute(query, args)
                return cur.fetchall() if cur.description else None
        finally:
            c.close()

    def role_calls(self, role):
        """pg_stat_statements' count of the statements a role ran to completion."""
        rows = self.sql("SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s "
                        "JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = %s", (role,))
        return int(rows[0][0])

    def stop(self):
        super().stop(sig=signal.SIGINT)  # fast shutdown: the backends are told to end
