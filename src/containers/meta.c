#include "containers/meta.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static void free_kvs(struct containers_kv *kv, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void containers_meta_free(struct containers_meta *m)
{
	free(m->name);
	free(m->image);
	free_kvs(m->labels, m->n_labels);
	free_kvs(m->env, m->n_env);
	free(m->ports);
	memset(m, 0, sizeof(*m));
}

static const char *lookup(const struct containers_kv *kv, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

const char *containers_meta_label(const struct containers_meta *m, const char *key)
{
	return lookup(m->labels, m->n_labels, key);
}

const char *containers_meta_env(const struct containers_meta *m, const char *key)
{
	return lookup(m->env, m->n_env, key);
}

static int set(struct containers_kv **kv, size_t *n, const char *key, const char *value)
{
	if (strlen(value) > CONTAINERS_META_MAX_VALUE || strlen(key) > CONTAINERS_META_MAX_VALUE)
		return -E2BIG;
	char *v = strdup(value);
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++) {
		if (!strcmp((*kv)[i].key, key)) {
			free((*kv)[i].value);
			(*kv)[i].value = v;
			return 0;
		}
	}
	if (*n >= CONTAINERS_META_MAX_LABELS) {
		free(v);
		return -E2BIG;
	}
	char *k = strdup(key);
	struct containers_kv *grown = realloc(*kv, (*n + 1) * sizeof(**kv));
	if (!k || !grown) {
		free(k);
		free(v);
		if (grown)
			*kv = grown;
		return -ENOMEM;
	}
	*kv = grown;
	grown[*n] = (struct containers_kv){ k, v };
	(*n)++;
	return 0;
}

int containers_meta_set_label(struct containers_meta *m, const char *key, const char *value)
{
	return set(&m->labels, &m->n_labels, key, value);
}

int containers_meta_set_env(struct containers_meta *m, const char *key, const char *value)
{
	return set(&m->env, &m->n_env, key, value);
}

int containers_meta_set_string(char **field, const char *value)
{
	char *v = strdup(value);

	if (!v)
		return -ENOMEM;
	free(*field);
	*field = v;
	return 0;
}

static int add_port(struct containers_meta *m, uint16_t family, const uint8_t *ip, uint16_t port)
{
	for (size_t i = 0; i < m->n_ports; i++) /* Docker lists a binding once per proto and spec */
		if (m->ports[i].family == family && m->ports[i].port == port &&
		    !memcmp(m->ports[i].ip, ip, 16))
			return 0;
	if (m->n_ports == CONTAINERS_META_MAX_PORTS)
		return -E2BIG;
	struct containers_port *p = realloc(m->ports, (m->n_ports + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	m->ports = p;
	p[m->n_ports].family = family;
	p[m->n_ports].port = port;
	memcpy(p[m->n_ports].ip, ip, 16);
	m->n_ports++;
	return 0;
}

int containers_meta_add_port(struct containers_meta *m, const char *host_ip, const char *host_port)
{
	uint8_t ip[16] = { 0 };
	unsigned long port = 0;
	size_t n = strlen(host_port);

	if (!n || n > 5 || strspn(host_port, "0123456789") != n)
		return -EINVAL;
	port = strtoul(host_port, NULL, 10);
	if (!port || port > 65535)
		return -EINVAL;
	if (!*host_ip) { /* as Docker binds it: every IPv4 and IPv6 address */
		int rc = add_port(m, AF_INET, ip, (uint16_t)port);
		return rc ? rc : add_port(m, AF_INET6, ip, (uint16_t)port);
	}
	if (inet_pton(AF_INET, host_ip, ip) == 1)
		return add_port(m, AF_INET, ip, (uint16_t)port);
	if (inet_pton(AF_INET6, host_ip, ip) == 1)
		return add_port(m, AF_INET6, ip, (uint16_t)port);
	return -EINVAL;
}
