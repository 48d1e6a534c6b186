"""A private MariaDB (Debian's mariadb-server package) for the e2e tests: mariadb-install-db into
a temporary directory, mariadbd in the foreground on 127.0.0.1 (it drops to the mysql user
itself), TLS on a self-signed certificate, and a user `test` with a password (the grant tables
stay on, so SHOW GLOBAL STATUS counts what every connection ran)."""
import os

from service import Service, need

PASSWORD = "e2e-password"


class MariaDB(Service):
    def __init__(self):
        super().__init__("mariadb", user="mysql")
        data = self.path("data")
        os.mkdir(data)
        self.chown(data)
        self.sock = self.path("mysqld.sock")
        self.run([need("mariadb-install-db", "mariadb-server"), "--no-defaults", "--user=mysql",
                  f"--datadir={data}", "--auth-root-authentication-method=normal",
                  "--skip-test-db"], as_user=False)
        key, crt = self.cert()
        self.start([need("/usr/sbin/mariadbd", "mariadb-server"), "--no-defaults", "--user=mysql",
                    f"--datadir={data}", f"--socket={self.sock}", f"--pid-file={self.path('mysqld.pid')}",
                    "--bind-address=127.0.0.1", f"--port={self.port}", f"--ssl-cert={crt}",
                    f"--ssl-key={key}", "--skip-log-bin", "--innodb-buffer-pool-size=16M",
                    "--innodb-log-file-size=8M", "--skip-name-resolve",
                    f"--log-error={self.path('error.log')}"], drop_user=False)
        self.root_sql(f"CREATE USER test@'%' IDENTIFIED BY '{PASSWORD}'",
                      "GRANT ALL ON *.* TO test@'%'", "CREATE DATABASE e2e")

    def logs(self, *extra):
        return super().logs(self.path("error.log"), *extra)

    def root_sql(self, *statements):
        import pymysql
        c = pymysql.connect(unix_socket=self.sock, user="root", autocommit=True)
        try:
            with c.cursor() as cur:
                for s in statements:
                    cur.execute(s)
        finally:
            c.close()

    def connect(self, tls=False, **kw):
        import pymysql
        ssl = {"ssl": {"check_hostname": False, "verify_mode": 0}} if tls else {}
        return pymysql.connect(host="127.0.0.1", port=self.port, user="test", password=PASSWORD,
                               database="e2e", autocommit=True, **ssl, **kw)

    def global_status(self):
        """SHOW GLOBAL STATUS over the unix socket (not traced: no TCP): {name: int}."""
        import pymysql
        c = pymysql.connect(unix_socket=self.sock, user="root")
        try:
            with c.cursor() as cur:
                cur.execute("SHOW GLOBAL STATUS")
                return {k: int(v) for k, v in cur.fetchall() if v.lstrip("-").isdigit()}
        finally:
            c.close()
