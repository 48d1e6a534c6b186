#!/bin/bash
# Re-makes the database parser tests' captures (tests/unit/data/l7/*.cap) from Debian's
# clients and servers, started here on loopback in a scratch directory and stopped at the end.
# Run as root from the repository root; needs the packages `make deps` installs. The bytes differ
# from run to run (ids, timestamps, salts), so the tests' expectations may need a look after.
set -euo pipefail
OUT=$(pwd)/tests/unit/data/l7
E2E=$(pwd)/tests/e2e # the stand-in servers of the protocols Debian has no server for
PROXY=$OUT/capture_proxy.py
PY=/usr/bin/python3
W=$(mktemp -d /tmp/nodescope-capture.XXXXXX)
chmod 755 "$W"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$W/pg/postmaster.pid" ] && runuser -u postgres -- /usr/lib/postgresql/*/bin/pg_ctl -D "$W/pg" stop -m fast >/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
wait_port() { while ! ss -ltn | grep -q "127.0.0.1:$1 "; do sleep 0.1; done; }

# cap NAME PROXY_PORT SERVER_PORT CMD...: CMD's connections through the proxy into NAME.cap.
cap() {
	local name=$1 pp=$2 sp=$3
	shift 3
	rm -f "$OUT/$name.cap"
	$PY "$PROXY" "$pp" "$sp" "$OUT/$name.cap" --all &
	local proxy=$!
	wait_port "$pp"
	"$@" >/dev/null 2>&1 || true
	sleep 0.3
	kill $proxy
	wait $proxy 2>/dev/null || true
}

openssl req -new -x509 -days 2 -nodes -subj /CN=localhost -keyout "$W/key.pem" -out "$W/cert.pem" 2>/dev/null

# PostgreSQL, with TLS available
chown postgres "$W"
runuser -u postgres -- /usr/lib/postgresql/*/bin/initdb -D "$W/pg" -A trust -U postgres >/dev/null
cp "$W/key.pem" "$W/cert.pem" "$W/pg/" && chown postgres "$W/pg/"*.pem && chmod 600 "$W/pg/key.pem"
runuser -u postgres -- /usr/lib/postgresql/*/bin/pg_ctl -D "$W/pg" -l "$W/pg.log" -o \
	"-p 19410 -k $W -c listen_addresses=127.0.0.1 -c ssl=on -c ssl_cert_file=cert.pem -c ssl_key_file=key.pem" start >/dev/null
psql -h 127.0.0.1 -p 19410 -U postgres -c "CREATE TABLE t (id int, name text)" >/dev/null
printf '1\tx\n2\ty\n' > "$W/copy.txt"
PG="host=127.0.0.1 port=19411 user=postgres"
cap pg_simple 19411 19410 psql "$PG sslmode=disable" -X -q \
	-c "SELECT id, name FROM t WHERE name = 'secret' AND id IN (1, 2, 3)" -c "SELECT * FROM no_such_table" \
	-c "INSERT INTO t VALUES (1, 'a'); SELECT 1; SELECT 1/0" -c "COPY t TO STDOUT" -c "\\copy t FROM '$W/copy.txt'"
cap pg_ssl 19411 19410 psql "$PG sslmode=require" -X -q -c "SELECT 1"
cat > "$W/pipe.sql" <<'SQL'
\set v random(1, 100)
\startpipeline
SELECT name FROM t WHERE id = :v;
INSERT INTO t VALUES (:v, 'pipelined');
SELECT 1/0;
SELECT 2;
\endpipeline
SQL
printf "SELECT name FROM t WHERE id = 42;\nUPDATE t SET name = 'z' WHERE id = 42;\n" > "$W/ext.sql"
chmod 644 "$W"/*.sql
BENCH="runuser -u postgres -- env PGSSLMODE=disable pgbench -h 127.0.0.1 -p 19411 -U postgres -n"
cap pg_pipeline 19411 19410 $BENCH -M prepared -t 1 -f "$W/pipe.sql" postgres
cap pg_extended 19411 19410 $BENCH -M extended -t 2 -f "$W/ext.sql" postgres

# MariaDB, with TLS available
mkdir -p "$W/my" && chown mysql "$W/my"
mariadb-install-db --user=mysql --datadir="$W/my/data" --auth-root-authentication-method=normal >/dev/null 2>&1
cp "$W/key.pem" "$W/cert.pem" "$W/my/" && chown mysql "$W/my/"*.pem
/usr/sbin/mariadbd --user=mysql --datadir="$W/my/data" --port=19420 --bind-address=127.0.0.1 \
	--socket="$W/my/sock" --pid-file="$W/my/pid" --ssl-cert="$W/my/cert.pem" --ssl-key="$W/my/key.pem" \
	>"$W/my.log" 2>&1 &
PIDS+=($!)
wait_port 19420
mariadb -S "$W/my/sock" -uroot -e "CREATE DATABASE d; CREATE TABLE d.t (id int, name text);
	CREATE USER 'u'@'127.0.0.1' IDENTIFIED BY 'pw'; GRANT ALL ON d.* TO 'u'@'127.0.0.1';"
MY="mariadb -h 127.0.0.1 -P 19421 -uu -ppw"
cap my_query 19421 19420 $MY --ssl=0 d -e "SELECT id, name FROM t WHERE name = 'secret' AND id IN (1,2,3); SELECT * FROM no_such_table"
cap my_multi 19421 19420 $MY --ssl=0 d -e "INSERT INTO t VALUES (1, 'a'); SELECT 1; SELECT 2; SELECT name FROM t"
cap my_multi2 19421 19420 $PY -c "
import pymysql
from pymysql.constants import CLIENT
c = pymysql.connect(host='127.0.0.1', port=19421, user='u', password='pw', database='d', client_flag=CLIENT.MULTI_STATEMENTS)
cur = c.cursor()
cur.execute(\"SELECT 1; SELECT 2, 3; INSERT INTO t VALUES (7, 'x')\")
while cur.nextset(): pass
cur.execute('SELECT name FROM t WHERE id = %s', (5,))
c.close()"
cat > "$W/prep.pl" <<'PERL'
use DBI;
my $dbh = DBI->connect("DBI:MariaDB:database=d;host=127.0.0.1;port=19421;mariadb_server_prepare=1;mariadb_ssl=0",
	"u", "pw", {RaiseError => 0, PrintError => 0});
my $sth = $dbh->prepare("SELECT name FROM t WHERE id = ? AND name <> 'secret'");
$sth->execute(1); $sth->fetchall_arrayref; $sth->execute(2); $sth->fetchall_arrayref;
my $ins = $dbh->prepare("INSERT INTO t VALUES (?, ?)"); $ins->execute(3, "c");
my $bad = $dbh->prepare("SELECT * FROM no_such_table WHERE id = ?");
$sth->finish; undef $sth; undef $ins;
$dbh->disconnect;
PERL
cap my_prepared 19421 19420 perl "$W/prep.pl"
cap my_ssl 19421 19420 $MY --ssl d -e "SELECT 1"

# Redis
redis-server --port 19430 --bind 127.0.0.1 --dir "$W" --save "" --appendonly no --enable-debug-command yes \
	>"$W/redis.log" 2>&1 &
PIDS+=($!)
wait_port 19430
cap redis_py 19431 19430 $PY -c "
import redis
r = redis.Redis(port=19431)
r.set('user:1', 'secret-value'); r.get('user:1'); r.get('missing')
try: r.lpush('user:1', 'x')
except redis.ResponseError: pass
p = r.pipeline(transaction=True); p.incr('n'); p.hset('h', mapping={'a': '1', 'b': '2'}); p.hgetall('h'); p.execute()
p = r.pipeline(transaction=False)
for i in range(5): p.get('k%d' % i)
p.execute()"
cap redis_pubsub 19431 19430 $PY -c "
import redis
r = redis.Redis(port=19431)
p = r.pubsub()
p.subscribe('ch1', 'ch2')
p.get_message(timeout=1); p.get_message(timeout=1)
r2 = redis.Redis(port=19430)
r2.publish('ch1', 'hello'); r2.publish('ch2', 'world')
for _ in range(2): p.get_message(timeout=1)
p.ping(); p.get_message(timeout=1)
p.unsubscribe(); p.get_message(timeout=1); p.get_message(timeout=1)
p.close()"
redis-cli -p 19430 sadd s a b >/dev/null
cap redis_resp3 19431 19430 $PY -c "
import socket, time
s = socket.create_connection(('127.0.0.1', 19431))
def cmd(*a):
    s.sendall(b'*%d\r\n' % len(a) + b''.join(b'\$%d\r\n%s\r\n' % (len(x), x) for x in (x.encode() for x in a)))
    time.sleep(0.1); s.recv(65536)
cmd('HELLO', '3')
for c in [('HSET', 'h3', 'x', '1'), ('HGETALL', 'h3'), ('SMEMBERS', 's'), ('DEBUG', 'PROTOCOL', 'bignum'),
          ('DEBUG', 'PROTOCOL', 'verbatim'), ('DEBUG', 'PROTOCOL', 'attrib'), ('DEBUG', 'PROTOCOL', 'double'),
          ('DEBUG', 'PROTOCOL', 'null'), ('DEBUG', 'PROTOCOL', 'true'), ('DEBUG', 'PROTOCOL', 'push'),
          ('GET', 'nokey'), ('INCR', 'h3'), ('CLIENT', 'TRACKING', 'on'), ('GET', 'tracked'), ('SET', 'tracked', 'v')]:
    cmd(*c)
s.sendall(b'PING\r\nGET user:1\r\n'); time.sleep(0.1); s.recv(65536)"

# memcached
memcached -p 19440 -l 127.0.0.1 -U 0 -u nobody >"$W/mc.log" 2>&1 &
PIDS+=($!)
wait_port 19440
cap mc_text 19441 19440 $PY -c "
from pymemcache.client.base import Client
c = Client(('127.0.0.1', 19441))
c.set('user:1', 'secret-value'); c.get('user:1'); c.get('missing'); c.get_many(['user:1', 'missing', 'n'])
c.set('n', '5', noreply=True); c.incr('n', 3); c.gets('n'); c.cas('n', '9', b'999'); c.delete('n'); c.add('user:1', 'x', noreply=False)
c.touch('user:1', 10); c.stats()
c.incr('user:1', 1)"
cap mc_raw 19441 19440 $PY -c "
import socket, struct, time
s = socket.create_connection(('127.0.0.1', 19441))
def send(b):
    s.sendall(b); time.sleep(0.1); s.recv(65536)
for b in [b'ms m1 2 T0\r\nhi\r\n', b'mg m1 v k\r\n', b'mg nothere v\r\n', b'md m1 q\r\nmn\r\n', b'bogus command\r\n']:
    send(b)
s.close()
s = socket.create_connection(('127.0.0.1', 19441))
def binreq(op, key=b'', extras=b'', value=b'', opaque=0):
    body = extras + key + value
    return struct.pack('>BBHBBHIIQ', 0x80, op, len(key), len(extras), 0, 0, len(body), opaque, 0) + body
send(binreq(0x01, b'b1', struct.pack('>II', 0, 0), b'secret', 1))
send(binreq(0x00, b'b1', opaque=2))
send(binreq(0x00, b'nokey', opaque=3))
send(binreq(0x09, b'nokey', opaque=4) + binreq(0x0a, opaque=5))"

# MongoDB: no server in Debian; pymongo against a stand-in answering with replies made by bson
$PY "$OUT/mongo_standin.py" 19450 &
PIDS+=($!)
wait_port 19450
cap mongo_pymongo 19451 19450 $PY -c "
import pymongo
c = pymongo.MongoClient('mongodb://127.0.0.1:19451/?directConnection=true', serverSelectionTimeoutMS=3000)
db = c.db
list(db.users.find({'name': 'secret'}))
db.users.insert_many([{'name': 'a'}, {'name': 'b'}])
try: db.command('drop', 'missing')
except Exception: pass
db.get_collection('users', write_concern=pymongo.WriteConcern(w=0)).insert_one({'name': 'unacked'})
c.close()"

# Kafka: no server in Debian; python3-kafka's producers and consumer against a stand-in broker
# answering with that library's own response encoders (advertising the proxy's port)
$PY "$E2E/srv_kafka.py" 19460 19461 &
PIDS+=($!)
wait_port 19460
cap kafka_python 19461 19460 $PY -c "
from kafka import KafkaProducer, KafkaConsumer, TopicPartition
p = KafkaProducer(bootstrap_servers='127.0.0.1:19461', client_id='shop-api', acks=1, retries=0)
p.send('events', key=b'k1', value=b'secret-payload').get(timeout=5)
p.send('events', value=b'second').get(timeout=5)
try: p.send('full', value=b'x' * 100).get(timeout=5)
except Exception: pass
p.close()
p0 = KafkaProducer(bootstrap_servers='127.0.0.1:19461', client_id='fire-and-forget', acks=0)
p0.send('events', value=b'unacked'); p0.flush(); p0.close()
c = KafkaConsumer(bootstrap_servers='127.0.0.1:19461', client_id='reader', group_id=None, enable_auto_commit=False, fetch_max_wait_ms=100)
c.assign([TopicPartition('events', 0)]); c.seek(TopicPartition('events', 0), 0)
c.poll(timeout_ms=150); c.poll(timeout_ms=150)
c.close()"

# ZooKeeper 3.8: zkCli.sh, then python3-kazoo (auth, a watch fired by a second client, multi)
cat > "$W/zoo.cfg" <<CFG
tickTime=2000
dataDir=$W/zk
clientPort=19470
clientPortAddress=127.0.0.1
admin.enableServer=false
CFG
java -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar org.apache.zookeeper.server.ZooKeeperServerMain \
	"$W/zoo.cfg" >"$W/zk.log" 2>&1 &
PIDS+=($!)
wait_port 19470
cap zk_cli 19471 19470 sh -c "printf 'create /app secret-value\nget /app\nset /app v2\nls /\nstat /missing\ncreate /app again\ndelete /app\nquit\n' |
	/usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:19471"
cap zk_kazoo 19471 19470 $PY -c "
import time
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
zk = KazooClient(hosts='127.0.0.1:19471', timeout=4)
zk.start()
zk.add_auth('digest', 'user:secret-password')
zk.ensure_path('/svc')
zk.get_children('/svc', watch=lambda e: None)
other = KazooClient(hosts='127.0.0.1:19470'); other.start(); other.create('/svc/n1', b'x'); other.stop()
t = zk.transaction(); t.create('/svc/a', b'1'); t.set_data('/svc/n1', b'2'); t.delete('/svc/a'); t.commit()
t = zk.transaction(); t.check('/svc/n1', 99); t.delete('/svc/n1'); t.commit()
try: zk.get('/nowhere')
except NoNodeError: pass
time.sleep(3)
zk.delete('/svc', recursive=True)
zk.stop(); zk.close()"

# NATS 2.9, with a client written here (Debian has no NATS client library)
nats-server -a 127.0.0.1 -p 19480 >"$W/nats.log" 2>&1 &
PIDS+=($!)
wait_port 19480
cap nats_raw 19481 19480 $PY -c "
import socket
def rx(s, t=0.2):
    s.settimeout(t)
    try:
        while s.recv(65536): pass
    except socket.timeout: pass
s = socket.create_connection(('127.0.0.1', 19481)); rx(s)
for b in [b'CONNECT {\"verbose\":false,\"pedantic\":false,\"headers\":true,\"name\":\"orders\",\"lang\":\"python\",\"version\":\"0\"}\r\nPING\r\n',
          b'SUB orders.* 1\r\n', b'PUB orders.new 14\r\nsecret-payload\r\n',
          b'HPUB orders.paid 21 26\r\nNATS/1.0\r\nX-Id: 7\r\n\r\nhello\r\n',
          b'PUB orders.ask _INBOX.r1 3\r\nask\r\nPUB orders.a 0\r\n\r\nPUB orders.b 1\r\nb\r\nPING\r\n',
          b'UNSUB 1\r\nPUB orders.gone 1\r\nx\r\nPING\r\n']:
    s.sendall(b); rx(s)
s.close()
s = socket.create_connection(('127.0.0.1', 19481)); rx(s)
for b in [b'CONNECT {\"verbose\":true,\"pedantic\":true,\"name\":\"verbose\"}\r\n', b'SUB jobs 9\r\n',
          b'PUB jobs 2\r\nj1\r\n', b'PUB jobs.* 1\r\nx\r\n', b'PING\r\n']:
    s.sendall(b); rx(s)
s.close()"

# RabbitMQ 3.10 and pika
mkdir -p "$W/rmq/home" && echo '[].' > "$W/rmq/plugins" && echo 'loopback_users = none' > "$W/rmq/rabbitmq.conf"
HOME=$W/rmq/home RABBITMQ_NODENAME=capture@localhost RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT=19490 \
	RABBITMQ_DIST_PORT=19495 ERL_EPMD_PORT=19496 RABBITMQ_MNESIA_BASE=$W/rmq/mnesia RABBITMQ_LOG_BASE=$W/rmq/log \
	RABBITMQ_ENABLED_PLUGINS_FILE=$W/rmq/plugins RABBITMQ_CONFIG_FILE=$W/rmq/rabbitmq \
	/usr/lib/rabbitmq/bin/rabbitmq-server >"$W/rmq.log" 2>&1 &
PIDS+=($!)
wait_port 19490
cap amqp_pika 19491 19490 $PY -c "
import pika
c = pika.BlockingConnection(pika.ConnectionParameters(host='127.0.0.1', port=19491, heartbeat=0))
ch = c.channel()
ch.exchange_declare('orders', exchange_type='topic'); ch.queue_declare('jobs'); ch.queue_bind('jobs', 'orders', routing_key='order.*')
ch.basic_publish('orders', 'order.new', b'secret-payload')
ch.basic_publish('', 'jobs', b'x' * 300, pika.BasicProperties(content_type='text/plain', delivery_mode=2))
ch.basic_publish('orders', 'order.paid', b'')
ch.basic_get('jobs', auto_ack=True)
got = []
def on(ch_, method, props, body):
    got.append(body); ch_.basic_ack(method.delivery_tag)
    if len(got) == 2: ch_.stop_consuming()
ch.basic_consume('jobs', on); ch.start_consuming()
ch2 = c.channel()
try:
    ch2.basic_publish('no-such-exchange', 'k', b'lost'); ch2.queue_declare('jobs', passive=True)
    ch2.queue_declare('missing-queue', passive=True)
except Exception: pass
ch.queue_delete('jobs'); ch.exchange_delete('orders')
c.close()"

# Cassandra: no server in Debian; python3-cassandra's connection (v4, then v5) against a stand-in
$PY "$E2E/srv_cassandra.py" 19500 &
PIDS+=($!)
wait_port 19500
for v in 4 5; do
cap cql_v$v 19501 19500 $PY -c "
from cassandra import ConsistencyLevel
from cassandra.io.asyncorereactor import AsyncoreConnection
from cassandra.protocol import QueryMessage, PrepareMessage, ExecuteMessage, BatchMessage
from cassandra.query import BatchType
AsyncoreConnection.initialize_reactor()
c = AsyncoreConnection.factory('127.0.0.1', 5, port=19501, protocol_version=$v)
one = ConsistencyLevel.ONE
q = lambda s: c.wait_for_response(QueryMessage(s, one))
q('USE shop')
q(\"SELECT name FROM users WHERE id = 'secret-id' AND age IN (1, 2, 3)\")
q(\"INSERT INTO users (id, name) VALUES ('u1', 'secret-name')\")
p = c.wait_for_response(PrepareMessage('SELECT name FROM users WHERE id = ?'))
c.wait_for_response(ExecuteMessage(p.query_id, [b'u1'], one, result_metadata_id=getattr(p, 'result_metadata_id', None)))
c.wait_for_response(BatchMessage(BatchType.LOGGED, [(False, \"INSERT INTO users (id, name) VALUES ('u2', 'x')\", []), (True, p.query_id, [b'u3'])], one))
c.wait_for_responses(*[QueryMessage(\"SELECT name FROM users WHERE id = 'p%d'\" % i, one) for i in range(3)], timeout=5)
q('SELECT * FROM no_such_table')"
done

# HTTP/2 without TLS: nghttpd, nghttp (three streams on one connection) and curl
mkdir -p "$W/h2" && echo hello > "$W/h2/index.html"
nghttpd --no-tls -d "$W/h2" 19510 >"$W/nghttpd.log" 2>&1 &
PIDS+=($!)
wait_port 19510
rm -f "$OUT/h2_nghttp.cap"
$PY "$PROXY" 19511 19510 "$OUT/h2_nghttp.cap" --all &
H2PROXY=$!
wait_port 19511
nghttp -n http://127.0.0.1:19511/index.html http://127.0.0.1:19511/missing "http://127.0.0.1:19511/index.html?q=secret"
sleep 0.2
curl -s -o /dev/null --http2-prior-knowledge -H "Cookie: session=secret-cookie" http://127.0.0.1:19511/index.html
sleep 0.2
curl -s -o /dev/null --http2-prior-knowledge -d 'secret=1' http://127.0.0.1:19511/missing
sleep 0.3
kill $H2PROXY
# HPACK blocks from python3-hpack's encoder
$PY "$OUT/hpack_blocks.py" > "$OUT/hpack_blocks.txt"

# ClickHouse 18.16
mkdir -p "$W/ch"
cat > "$W/ch/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>$W/ch/server.log</log><errorlog>$W/ch/err.log</errorlog><console>0</console></logger>
    <tcp_port>19400</tcp_port>
    <listen_host>127.0.0.1</listen_host>
    <path>$W/ch/data/</path>
    <tmp_path>$W/ch/tmp/</tmp_path>
    <user_files_path>$W/ch/user_files/</user_files_path>
    <format_schema_path>$W/ch/fs/</format_schema_path>
    <users_config>/etc/clickhouse-server/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>5368709</mark_cache_size>
</yandex>
XML
/usr/sbin/clickhouse-server --config-file="$W/ch/config.xml" >"$W/ch/out.log" 2>&1 &
PIDS+=($!)
wait_port 19400
cap clickhouse_select 19401 19400 clickhouse-client --port 19401 -q "SELECT 1, 'secret' WHERE 1 IN (1, 2, 3)"
cap clickhouse_error 19401 19400 clickhouse-client --port 19401 -q "SELECT * FROM no_such_table"
echo "captures written to $OUT"
