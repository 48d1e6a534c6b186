/*
 * JSON-lines encoding of events. Strings are escaped so any byte sequence
 * gives valid JSON: valid UTF-8 passes through, control characters and each
 * byte of invalid UTF-8 become \u00XX (so the byte value can be recovered).
 */
#ifndef NODESCOPE_TRACE_JSON_H
#define NODESCOPE_TRACE_JSON_H

#include <stdint.h>

#include "util/strbuf.h"

void json_string(struct strbuf *sb, const char *s);
/* {"type":"<type>" */
void json_begin(struct strbuf *sb, const char *type);
/* Values: a number, true or false. */
void json_u64(struct strbuf *sb, uint64_t val);
void json_i64(struct strbuf *sb, int64_t val);
void json_bool(struct strbuf *sb, int val);
/*
 * ,"key":value. A key is a string literal of the program's own (anything
 * else does not compile) made of bytes JSON takes as they are, no quote,
 * backslash or control byte: the whole ,"key": is then one constant and one
 * copy (keys were a fifth of the agent's time in trace mode, scanned and
 * checked a byte at a time).
 */
#define JSON_KEY(key) ",\"" key "\":"
#define json_key_(sb, key) strbuf_append((sb), JSON_KEY(key), sizeof(JSON_KEY(key)) - 1)
#define json_key_str(sb, key, val) (json_key_((sb), key), json_string((sb), (val)))
#define json_key_u64(sb, key, val) (json_key_((sb), key), json_u64((sb), (val)))
#define json_key_i64(sb, key, val) (json_key_((sb), key), json_i64((sb), (val)))
#define json_key_bool(sb, key, val) (json_key_((sb), key), json_bool((sb), (val)))
/* }\n */
void json_end(struct strbuf *sb);

#endif
