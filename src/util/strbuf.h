/* Growable byte buffer: the one way nodescope builds text (exposition, JSON, pages). */
#ifndef NODESCOPE_UTIL_STRBUF_H
#define NODESCOPE_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

struct strbuf {
	char *buf; /* always NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
	int oom; /* set once an allocation failed; later appends are ignored */
};

#define STRBUF_INIT { 0 }

void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
/* Room for extra more bytes and a NUL; -1 once an allocation failed. */
int strbuf_grow(struct strbuf *sb, size_t extra);

/* n more bytes at the end, to be written by the caller (NUL after them); NULL once out of memory. */
static inline char *strbuf_extend(struct strbuf *sb, size_t n)
{
	if ((sb->oom || sb->len + n + 1 > sb->cap) && strbuf_grow(sb, n))
		return NULL;
	char *p = sb->buf + sb->len;
	sb->len += n;
	sb->buf[sb->len] = '\0';
	return p;
}

/* Inline: JSON lines and expositions are built from many small appends. */
static inline void strbuf_append(struct strbuf *sb, const void *data, size_t n)
{
	char *p = strbuf_extend(sb, n);
	if (p)
		memcpy(p, data, n);
}

static inline void strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_append(sb, &c, 1);
}

void strbuf_puts(struct strbuf *sb, const char *s);
__attribute__((format(printf, 2, 3))) void strbuf_printf(struct strbuf *sb, const char *fmt, ...);
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap);
/* Returns the contents as a C string ("" when empty). */
const char *strbuf_str(const struct strbuf *sb);

#endif
