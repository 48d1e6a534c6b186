/*
 * A connection's prepared statements: name (PostgreSQL) or id (MySQL) to the
 * operation and stripped text, so an execution reports the statement it
 * runs. Bounded: when full the oldest entry goes (counted as table_full).
 * Allocated on the first statement.
 */
#ifndef NODESCOPE_L7_STMTS_H
#define NODESCOPE_L7_STMTS_H

#include "proto.h"

#define L7_STMTS_MAX 64
#define L7_STMT_NAME_LEN 64 /* longer names are told apart by their first bytes only */

struct l7_stmt {
	char name[L7_STMT_NAME_LEN];
	char op[L7_OP_LEN];
	char text[L7_TEXT_LEN];
	uint64_t age; /* insertion order: the smallest goes first */
};

struct l7_stmts {
	struct l7_stmt *e; /* L7_STMTS_MAX entries once allocated; name "" is free */
	unsigned n;
	/*
	 * Entries from e[hi] on are all free: a look-up reads only the ones
	 * below (a pool's connection prepares a few statements, and every
	 * entry is a cache line's walk apart).
	 */
	unsigned hi;
	uint64_t next_age;
};

/* Adds or replaces name. Returns 0, 1 when an older entry was evicted, -1 without memory. */
int l7_stmts_put(struct l7_stmts *t, const char *name, const char *op, const char *text);
const struct l7_stmt *l7_stmts_get(const struct l7_stmts *t, const char *name);
void l7_stmts_del(struct l7_stmts *t, const char *name);
void l7_stmts_free(struct l7_stmts *t);

#endif
