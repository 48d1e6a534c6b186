/* Prepared statements per connection. See stmts.h. */
#include "stmts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct l7_stmt *find(const struct l7_stmts *t, const char *name)
{
	if (!t->e || !name[0])
		return NULL;
	for (unsigned i = 0; i < t->hi; i++)
		if (t->e[i].name[0] && !strncmp(t->e[i].name, name, L7_STMT_NAME_LEN - 1))
			return &t->e[i];
	return NULL;
}

int l7_stmts_put(struct l7_stmts *t, const char *name, const char *op, const char *text)
{
	int evicted = 0;

	if (!name[0])
		return 0;
	if (!t->e && !(t->e = calloc(L7_STMTS_MAX, sizeof(*t->e))))
		return -1;
	struct l7_stmt *s = find(t, name);
	if (!s) {
		for (unsigned i = 0; i < t->hi && !s; i++)
			if (!t->e[i].name[0])
				s = &t->e[i];
		if (!s && t->hi < L7_STMTS_MAX)
			s = &t->e[t->hi++];
		if (!s) {
			s = &t->e[0];
			for (unsigned i = 1; i < L7_STMTS_MAX; i++)
				if (t->e[i].age < s->age)
					s = &t->e[i];
			evicted = 1;
		} else {
			t->n++;
		}
	}
	l7_join(s->name, sizeof(s->name), name, NULL);
	l7_join(s->op, sizeof(s->op), op, NULL);
	l7_join(s->text, sizeof(s->text), text, NULL);
	s->age = t->next_age++;
	return evicted;
}

const struct l7_stmt *l7_stmts_get(const struct l7_stmts *t, const char *name)
{
	return find(t, name);
}

void l7_stmts_del(struct l7_stmts *t, const char *name)
{
	struct l7_stmt *s = find(t, name);
	if (s) {
		s->name[0] = '\0';
		t->n--;
		while (t->hi && !t->e[t->hi - 1].name[0])
			t->hi--;
	}
}

void l7_stmts_free(struct l7_stmts *t)
{
	free(t->e);
	t->e = NULL;
	t->n = t->hi = 0;
}
