"""MySQL/MariaDB tracing (l7) against a private MariaDB (Debian's mariadb-server) on loopback:
counts against SHOW GLOBAL STATUS (read over the unix socket, which the agent does not see),
python3-pymysql queries in plain text and over TLS, server-side prepared statements
(COM_STMT_PREPARE/EXECUTE/CLOSE, by Perl's DBD::MariaDB with mariadb_server_prepare), the mariadb
command-line client over TLS, errors with their errno, and literals stripped. mariadbd reads a
packet's 4-byte header and its body in two recvfrom() calls: the server side checks that its
connections are recognised all the same."""
import pymysql
import pytest

from l7db import Counts, assert_secret_absent, client_cgroup, settle, tracer_l7, wait_delta, with_text  # noqa: F401
from service import need
from srv_mariadb import PASSWORD, MariaDB

P = "mysql"


@pytest.fixture(scope="module")
def db(tracer_l7):
    s = MariaDB()
    s.root_sql("CREATE TABLE e2e.t (id INT PRIMARY KEY, v VARCHAR(64))",
               "INSERT INTO e2e.t VALUES (1, 'one'), (2, 'two')")
    yield s
    s.stop()


def status_delta(db, fn):
    """What SHOW GLOBAL STATUS counted while fn() ran: {name: delta}."""
    s0 = db.global_status()
    fn()
    s1 = db.global_status()
    return {k: s1[k] - s0.get(k, 0) for k in s1}


def run_queries(db, n, tls):
    c = db.connect(tls=tls)
    with c.cursor() as cur:
        for i in range(n):
            cur.execute("SELECT v FROM t WHERE id = %s", (i % 2 + 1,))
            assert cur.fetchone()
    c.close()


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_pymysql_counts_match_global_status(tracer_l7, db, tls):
    before = Counts(tracer_l7, P, db)
    selects = status_delta(db, lambda: run_queries(db, 300, tls))["Com_select"]
    assert selects == 300  # pymysql sent nothing else (autocommit is the server's default)
    got = wait_delta(tracer_l7, P, db, before, lambda c: c.out(status="ok"), selects)
    assert got == selects, f"client side: {got} ok, Com_select: {selects}"
    now = Counts(tracer_l7, P, db)
    assert now.out() - before.out() == selects
    assert now.out_hist_count() - before.out_hist_count() == selects
    for f in ("unparseable", "lost", "table_full", "unpaired"):
        assert now.drop(f) == before.drop(f), f


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_server_side_counts_match_global_status(tracer_l7, db, tls):
    """Over TLS the server's side is mariadbd's own SSL_read/SSL_write (it links libssl)."""
    before = Counts(tracer_l7, P, db)
    selects = status_delta(db, lambda: run_queries(db, 50, tls))["Com_select"]
    assert selects == 50
    got = wait_delta(tracer_l7, P, db, before, lambda c: c.inb(status="ok"), selects)
    assert got == selects, f"server side: {got} ok, Com_select: {selects}"
    now = Counts(tracer_l7, P, db)
    assert now.inb() - before.inb() == selects
    assert now.in_hist_count() - before.in_hist_count() == selects
    for f in ("unparseable", "lost", "table_full", "unpaired"):
        assert now.drop(f) == before.drop(f), f


PERL_PREPARED = r"""
use DBI;
my ($port, $password, $n) = @ARGV;
my $dbh = DBI->connect("DBI:MariaDB:database=e2e;host=127.0.0.1;port=$port;mariadb_server_prepare=1",
                       "test", $password, { RaiseError => 1, AutoCommit => 1 });
my $sth = $dbh->prepare("SELECT v AS prepared_marker FROM t WHERE id = ?");
for my $i (1 .. $n) { $sth->execute($i % 2 + 1); my @r = $sth->fetchrow_array; die "no row" unless @r; $sth->finish; }
undef $sth;
$dbh->disconnect;
"""


def test_prepared_statements_com_stmt(tracer_l7, db, client_cgroup, tmp_path):
    script = tmp_path / "prepared.pl"
    script.write_text(PERL_PREPARED)
    cg = client_cgroup("perl-dbd-mariadb")
    deltas = status_delta(db, lambda: cg.run(["perl", str(script), str(db.port), PASSWORD, "40"]))
    assert deltas["Com_stmt_prepare"] == 1 and deltas["Com_stmt_execute"] == 40, \
        {k: v for k, v in deltas.items() if k.startswith("Com_stmt")}
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "prepared_marker", inbound_=False)) >= 41,
                 "PREPARE + 40 EXECUTEs")
    mine = with_text(evs, P, "prepared_marker", inbound_=False)
    # The executions carry the prepared statement's own operation.
    ops = [e["op"].upper() for e in mine]
    assert ops.count("PREPARE") == 1 and ops.count("SELECT") == 40 and len(ops) == 41, ops
    assert all(e["status"] == "ok" for e in mine), mine[:3]
    assert all("?" in e["statement"] for e in mine), mine[:3]


def test_mariadb_client_over_tls(tracer_l7, db, client_cgroup):
    before = Counts(tracer_l7, P, db)
    cg = client_cgroup("mariadb-client")
    sql = ";".join(f"SELECT {i} AS cli_tls_marker" for i in range(25))
    out = cg.run([need("mariadb", "mariadb-client"), "--no-defaults", "-h", "127.0.0.1", "-P", str(db.port),
                  "-u", "test", f"-p{PASSWORD}", "--ssl", "--ssl-verify-server-cert=0", "e2e",
                  "-e", sql + "; SHOW STATUS LIKE 'Ssl_version'"])
    assert "TLS" in out.stdout, out.stdout
    evs = settle(tracer_l7, lambda evs: len(with_text(evs, P, "cli_tls_marker", inbound_=False)) >= 25,
                 "25 queries over TLS")
    mine = with_text(evs, P, "cli_tls_marker", inbound_=False)
    assert len(mine) == 25 and all(e["status"] == "ok" and e["tls"] for e in mine), mine[:3]
    assert Counts(tracer_l7, P, db).out(container_id=cg.container) - before.out(container_id=cg.container) >= 25


def test_error_has_its_errno_and_literals_are_stripped(tracer_l7, db):
    secret = "e2e-secret-mysql-77c1"
    before = Counts(tracer_l7, P, db)
    c = db.connect()
    with c.cursor() as cur:
        with pytest.raises(pymysql.err.ProgrammingError):
            cur.execute("SELECT * FROM e2e_no_such_table WHERE id = 1")
        cur.execute(f"SELECT '{secret}' AS leak_check, 123456789 AS n")
    c.close()
    evs = settle(tracer_l7, lambda evs: with_text(evs, P, "e2e_no_such_table", inbound_=False)
                 and with_text(evs, P, "leak_check", inbound_=False), "both queries")
    failed = with_text(evs, P, "e2e_no_such_table", inbound_=False)
    assert len(failed) == 1 and (failed[0]["status"], failed[0].get("error_code")) == ("failed", "1146"), failed
    ok = with_text(evs, P, "leak_check", inbound_=False)
    assert len(ok) == 1 and ok[0]["status"] == "ok" and ok[0]["statement"].startswith("SELECT ?"), ok
    assert_secret_absent(tracer_l7, secret, "123456789")
    assert wait_delta(tracer_l7, P, db, before, lambda c: c.out(status="failed"), 1) == 1
