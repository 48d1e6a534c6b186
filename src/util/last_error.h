/*
 * The last failure of a module's calls in this thread, as a message: the
 * pure readers (ELF symbols, Go binaries, unwind tables, return sites)
 * return -errno and keep the why here. LAST_ERROR_DEFINE(prefix) defines
 * prefix_last_error() and a static fail(rc, fmt, ...) that records the
 * message and returns rc. Header-only, so fuzz targets need nothing else.
 */
#ifndef NODESCOPE_UTIL_LAST_ERROR_H
#define NODESCOPE_UTIL_LAST_ERROR_H

#include <stdarg.h>
#include <stdio.h>

#define LAST_ERROR_DEFINE(prefix)                                                   \
	static __thread char last_error[256];                                       \
	const char *prefix##_last_error(void)                                       \
	{                                                                           \
		return last_error;                                                  \
	}                                                                           \
	__attribute__((format(printf, 2, 3))) static int fail(int rc, const char *fmt, \
								 ...)           \
	{                                                                           \
		va_list ap;                                                         \
		va_start(ap, fmt);                                                  \
		vsnprintf(last_error, sizeof(last_error), fmt, ap);                 \
		va_end(ap);                                                         \
		return rc;                                                          \
	}

#endif
