#define _GNU_SOURCE /* memmem */
#include "resources/apptype.h"

#include <stdbool.h>
#include <string.h>

/* How a rule matches: the command's suffix, or a string anywhere in the command line. */
enum how { SUFFIX, CONTAINS, SUFFIX_AND_CONTAINS, CMD_CONTAINS, VERSIONED };

struct rule {
	const char *type;
	enum how how;
	const char *a, *b;
};

/* In Coroot's order: the first match wins. */
static const struct rule rules[] = {
	{ "coroot-community-edition", SUFFIX, "coroot" },
	{ "coroot-enterprise-edition", SUFFIX, "coroot-ee" },
	{ "coroot-node-agent", SUFFIX, "coroot-node-agent" },
	{ "coroot-cluster-agent", SUFFIX, "coroot-cluster-agent" },
	{ "coroot-operator", SUFFIX, "coroot-operator" },
	{ "memcached", SUFFIX, "memcached" },
	{ "envoy", SUFFIX, "envoy" },
	{ "elasticsearch", CONTAINS, "org.elasticsearch.bootstrap" },
	{ "opensearch", CONTAINS, "org.opensearch.bootstrap" },
	{ "kafka", CONTAINS, "kafka.Kafka" },
	{ "kafka", CONTAINS, "io.confluent.support.metrics.SupportedKafka" },
	{ "mongodb", SUFFIX, "mongod" },
	{ "mongos", SUFFIX, "mongos" },
	{ "mysql", SUFFIX, "mysqld" },
	{ "mysql", SUFFIX, "mariadbd" },
	{ "mssql", SUFFIX, "sqlservr" },
	{ "zookeeper", CONTAINS, "org.apache.zookeeper.server.quorum.QuorumPeerMain" },
	{ "redis", SUFFIX, "redis-server" },
	{ "redis-sentinel", SUFFIX, "redis-sentinel" },
	{ "keydb", SUFFIX, "keydb-server" },
	{ "valkey", SUFFIX, "valkey-server" },
	{ "dragonfly", SUFFIX, "dragonfly" },
	{ "rabbitmq", SUFFIX_AND_CONTAINS, "beam.smp", "rabbit" },
	{ "couchbase", SUFFIX_AND_CONTAINS, "beam.smp", "couch" },
	{ "pgbouncer", SUFFIX, "pgbouncer" },
	{ "postgres", SUFFIX, "postgres" },
	{ "haproxy", SUFFIX, "haproxy" },
	{ "nginx", SUFFIX, "nginx" },
	{ "dotnet", SUFFIX, "w3wp" },
	{ "kubelet", SUFFIX, "kubelet" },
	{ "kube-apiserver", SUFFIX, "kube-apiserver" },
	{ "kube-controller-manager", SUFFIX, "kube-controller-manager" },
	{ "kube-scheduler", SUFFIX, "kube-scheduler" },
	{ "k3s", SUFFIX, "k3s" },
	{ "etcd", SUFFIX, "etcd" },
	{ "dockerd", SUFFIX, "dockerd" },
	{ "consul", SUFFIX, "consul" },
	{ "cassandra", CONTAINS, "org.apache.cassandra.service.CassandraDaemon" },
	{ "clickhouse", SUFFIX, "clickhouse-server" },
	{ "traefik", SUFFIX, "traefik" },
	{ "aerospike", SUFFIX, "asd" },
	{ "httpd", SUFFIX, "httpd" },
	{ "httpd", SUFFIX, "apache" },
	{ "influxdb", SUFFIX, "influxd" },
	{ "tomcat", CONTAINS, "org.apache.catalina.startup.Bootstrap" },
	{ "vault", SUFFIX, "vault" },
	{ "proxysql", SUFFIX, "proxysql" },
	{ "cockroach", SUFFIX, "cockroach" },
	{ "prometheus", SUFFIX, "prometheus" },
	{ "ceph", SUFFIX, "ceph-mon" },
	{ "ceph", SUFFIX, "ceph-mgr" },
	{ "ceph", SUFFIX, "ceph-osd" },
	{ "ceph", SUFFIX, "cephcsi" },
	{ "rook", SUFFIX, "rook" },
	{ "nats", SUFFIX, "nats-server" },
	{ "java", SUFFIX, "java" },
	{ "ollama", SUFFIX, "ollama" },
	{ "foundationdb", SUFFIX, "fdbserver" },
	{ "victoria-metrics", CMD_CONTAINS, "victoria-metrics" },
	{ "victoria-metrics", CMD_CONTAINS, "vmstorage" },
	{ "victoria-metrics", CMD_CONTAINS, "vminsert" },
	{ "victoria-metrics", CMD_CONTAINS, "vmselect" },
	{ "victoria-logs", CMD_CONTAINS, "victoria-logs" },
	/* Coroot's regexps: the name, then optional version digits ("python3.11", "php-fpm8.2"). */
	{ "php", VERSIONED, "php" },
	{ "php", VERSIONED, "php-fpm" },
	{ "php", VERSIONED, "php-cgi" },
	{ "python", VERSIONED, "python" },
	{ "nodejs", VERSIONED, "node" },
	{ "nodejs", VERSIONED, "nodejs" },
	{ "ruby", VERSIONED, "ruby" },
};
#define N_RULES (sizeof(rules) / sizeof(rules[0]))
#define FIRST_VERSIONED (N_RULES - 7)

/* The type names, each once, in rule order; then golang and rust. */
static const char *names[APPTYPE_MAX];
static int n_names, bit_golang, bit_rust;

static int name_bit(const char *type)
{
	for (int i = 0; i < n_names; i++)
		if (!strcmp(names[i], type))
			return i;
	return -1;
}

static void init_names(void)
{
	if (n_names)
		return;
	for (size_t i = 0; i < N_RULES; i++)
		if (name_bit(rules[i].type) < 0)
			names[n_names++] = rules[i].type;
	bit_golang = n_names;
	names[n_names++] = "golang";
	bit_rust = n_names;
	names[n_names++] = "rust";
}

const char *apptype_name(int bit)
{
	init_names();
	return bit >= 0 && bit < n_names ? names[bit] : NULL;
}

int apptype_golang(void)
{
	init_names();
	return bit_golang;
}

int apptype_rust(void)
{
	init_names();
	return bit_rust;
}

static bool has_suffix(const char *s, size_t n, const char *suf)
{
	size_t l = strlen(suf);
	return n >= l && !memcmp(s + n - l, suf, l);
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* `.*NAME\d*\.?\d*$`: s ends with name and then digits, at most one dot, digits. */
static bool versioned(const char *s, size_t n, const char *name)
{
	while (n && is_digit(s[n - 1]))
		n--;
	if (n && s[n - 1] == '.') {
		n--;
		while (n && is_digit(s[n - 1]))
			n--;
	}
	return has_suffix(s, n, name);
}

static int match(const char *cmd, size_t n, const char *all, size_t all_len, size_t from)
{
	for (size_t i = from; i < N_RULES; i++) {
		const struct rule *r = &rules[i];
		bool ok = false;
		switch (r->how) {
		case SUFFIX:
			ok = has_suffix(cmd, n, r->a);
			break;
		case CONTAINS:
			ok = contains(all, all_len, r->a);
			break;
		case SUFFIX_AND_CONTAINS:
			ok = has_suffix(cmd, n, r->a) && contains(all, all_len, r->b);
			break;
		case CMD_CONTAINS:
			ok = contains(cmd, n, r->a);
			break;
		case VERSIONED:
			ok = versioned(cmd, n, r->a);
			break;
		}
		if (ok)
			return name_bit(r->type);
	}
	return -1;
}

int apptype_by_cmdline(const char *cmdline, size_t len)
{
	init_names();
	/* argv[0], then its first blank-separated word (a process may rewrite its title). */
	size_t argv0 = strnlen(cmdline, len);
	size_t s = 0;
	while (s < argv0 && (cmdline[s] == ' ' || cmdline[s] == '\t' || cmdline[s] == '\n' ||
			     cmdline[s] == '\r' || cmdline[s] == '\v' || cmdline[s] == '\f'))
		s++;
	size_t e = s;
	while (e < argv0 && !(cmdline[e] == ' ' || cmdline[e] == '\t' || cmdline[e] == '\n' ||
			      cmdline[e] == '\r' || cmdline[e] == '\v' || cmdline[e] == '\f'))
		e++;
	if (e == s)
		return -1;
	if (cmdline[e - 1] == ':')
		e--;
	return match(cmdline + s, e - s, cmdline, len, 0);
}

int apptype_by_exe(const char *exe)
{
	init_names();
	return match(exe, strlen(exe), exe, strlen(exe), FIRST_VERSIONED);
}

int apptype_dotnet_bit(void)
{
	init_names();
	return name_bit("dotnet");
}

/* The NUL-terminated argument i of cmdline ([s, s + *n)), or NULL past the last. */
static const char *arg(const char *cmdline, size_t len, int i, size_t *n)
{
	size_t s = 0;
	for (; i > 0; i--) {
		const char *nul = memchr(cmdline + s, '\0', len - s);
		if (!nul)
			return NULL;
		s = nul - cmdline + 1;
	}
	if (s > len)
		return NULL;
	*n = strnlen(cmdline + s, len - s);
	return cmdline + s;
}

bool apptype_dotnet(const char *cmdline, size_t len, bool apphost)
{
	size_t n0, n1;
	const char *a0 = arg(cmdline, len, 0, &n0), *a1;

	if (!a0 || !len)
		return false;
	/* Coroot asks the JVM first: a java command line is never .NET (needs a NUL, as its). */
	if (memchr(cmdline, '\0', len) && has_suffix(a0, n0, "java"))
		return false;
	/* Coroot splits at every NUL, the one ending the last argument too: argv[1] may be "". */
	if (memchr(cmdline, '\0', len) && (a1 = arg(cmdline, len, 1, &n1)) &&
	    has_suffix(a0, n0, "dotnet") && has_suffix(a1, n1, ".dll"))
		return true;
	/* The apphost's application name is argv[0]'s last path component: none, no monitor. */
	return apphost && n0 && a0[n0 - 1] != '/';
}
