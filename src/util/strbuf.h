/* Growable byte buffer: the one way nodescope builds text (exposition, JSON, pages). */
#ifndef NODESCOPE_UTIL_STRBUF_H
#define NODESCOPE_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf; /* always NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
	int oom; /* set once an allocation failed; later appends are ignored */
};

#define STRBUF_INIT { 0 }

void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_append(struct strbuf *sb, const void *data, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
__attribute__((format(printf, 2, 3))) void strbuf_printf(struct strbuf *sb, const char *fmt, ...);
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
/* Returns the contents as a C string ("" when empty). */
const char *strbuf_str(const struct strbuf *sb);

#endif
