#include "containers/meta.h"

#include <errno.h>
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
