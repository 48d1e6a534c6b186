/*
 * SQL with its literals stripped, for a trace line that carries no secret or
 * customer value: string, number, bit/hex and dollar-quoted literals become
 * `?`, a list of them `IN (1, 2, 3)` becomes `IN (?)` (and repeated value
 * tuples `VALUES (?), (?)` one), comments are dropped and blanks collapsed.
 * Identifiers, keywords, operators and placeholders ($1, ?, :name) are kept.
 * A literal cut by the end of the input is still replaced, so a statement
 * captured in part never leaks the part it shows.
 */
#ifndef NODESCOPE_L7_SQL_STRIP_H
#define NODESCOPE_L7_SQL_STRIP_H

#include <stdbool.h>
#include <stddef.h>

enum sql_dialect {
	SQL_POSTGRES,	/* '' strings (E'' with backslashes), $tag$ quoting, "" identifiers */
	SQL_MYSQL,	/* '' and "" strings with backslashes, `` identifiers, # comments */
	SQL_CLICKHOUSE, /* '' strings with backslashes, "" and `` identifiers */
};

/*
 * Writes the stripped form of in[0..n) into out (cap bytes, NUL-terminated,
 * cut at a character boundary with "..." when longer). Returns its length.
 */
size_t sql_strip(enum sql_dialect d, const char *in, size_t n, char *out, size_t cap);

/* Marks a stripped statement whose input was cut (not all captured or kept): "..." at its end. */
void sql_mark_cut(char *out, size_t cap);

/* The statement's first keyword, upper-cased ("SELECT"), into op; "" if none. */
void sql_operation(const char *in, size_t n, char *op, size_t cap);

#endif
