/*
 * The number reading the node's /proc parsers share: unsigned decimal
 * fields separated by blanks, with overflow reported, never wrapped.
 */
#ifndef NODESCOPE_NODE_FIELDS_H
#define NODESCOPE_NODE_FIELDS_H

#include <stdint.h>

/*
 * Skips spaces and tabs at *p, then reads one unsigned decimal number and
 * moves *p past it. Returns 0, -EINVAL when no digit is there (end of line,
 * a letter, a sign), -ERANGE when it does not fit in 64 bits.
 */
int node_field_u64(const char **p, uint64_t *out);

/* Moves *p past the current line's newline (to its NUL when it has none). */
void node_field_next_line(const char **p);

#endif
