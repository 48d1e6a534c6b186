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
/* ,"key":value */
void json_key_str(struct strbuf *sb, const char *key, const char *val);
void json_key_u64(struct strbuf *sb, const char *key, uint64_t val);
void json_key_i64(struct strbuf *sb, const char *key, int64_t val);
void json_key_bool(struct strbuf *sb, const char *key, int val);
/* }\n */
void json_end(struct strbuf *sb);

#endif
