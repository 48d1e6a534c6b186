#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "util/strbuf.h"

static void test_empty(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	assert_string_equal(strbuf_str(&sb), "");
	strbuf_reset(&sb); /* safe with no buffer */
	assert_string_equal(strbuf_str(&sb), "");
	strbuf_free(&sb);
	strbuf_free(&sb); /* free twice is fine: it resets to STRBUF_INIT */
	assert_null(sb.buf);
}

static void test_append_puts_putc(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_puts(&sb, "abc");
	strbuf_putc(&sb, '-');
	strbuf_append(&sb, "xyz123", 3);
	assert_string_equal(strbuf_str(&sb), "abc-xyz");
	assert_int_equal(sb.len, 7);
	assert_true(sb.cap > sb.len);
	assert_int_equal(sb.oom, 0);
	strbuf_free(&sb);
	assert_null(sb.buf);
	assert_int_equal(sb.len, 0);
	assert_int_equal(sb.cap, 0);
}

static void test_append_zero_terminates(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_append(&sb, "", 0);
	assert_non_null(sb.buf); /* "always NUL-terminated ... after any append" */
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	strbuf_free(&sb);
}

static void test_append_binary(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	static const char bin[] = { 'a', '\0', 'b' };

	strbuf_append(&sb, bin, sizeof(bin));
	assert_int_equal(sb.len, 3);
	assert_memory_equal(sb.buf, bin, 3);
	assert_int_equal(sb.buf[3], '\0');
	strbuf_free(&sb);
}

static void test_printf(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_printf(&sb, "%d-%s-%c", 42, "x", 'y');
	strbuf_printf(&sb, "|%05u", 7u);
	assert_string_equal(strbuf_str(&sb), "42-x-y|00007");
	assert_int_equal(sb.len, strlen("42-x-y|00007"));
	strbuf_printf(&sb, "%s", ""); /* empty output changes nothing */
	assert_string_equal(strbuf_str(&sb), "42-x-y|00007");
	strbuf_free(&sb);
}

static void test_printf_growth(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char big[1000];

	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';

	strbuf_puts(&sb, "head:");
	/* 5 + 999 + 5 bytes: well past the first 256-byte allocation */
	strbuf_printf(&sb, "%s:%04d", big, 12);
	assert_int_equal(sb.len, 5 + 999 + 5);
	assert_true(sb.cap >= sb.len + 1);
	assert_memory_equal(sb.buf, "head:", 5);
	for (size_t i = 0; i < 999; i++)
		assert_int_equal(sb.buf[5 + i], 'q');
	assert_string_equal(sb.buf + 5 + 999, ":0012");
	assert_int_equal(sb.oom, 0);
	strbuf_free(&sb);
}

static void test_growth_exact_boundary(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[256];

	/* 255 bytes + NUL fill exactly 256 */
	memset(chunk, 'a', 255);
	chunk[255] = '\0';
	strbuf_puts(&sb, chunk);
	assert_int_equal(sb.len, 255);
	assert_int_equal(sb.cap, 256);
	strbuf_putc(&sb, 'b'); /* one more needs a bigger buffer */
	assert_int_equal(sb.len, 256);
	assert_true(sb.cap > 256);
	assert_int_equal(sb.buf[255], 'b');
	assert_int_equal(sb.buf[256], '\0');

	/* many small printf appends */
	strbuf_reset(&sb);
	for (int i = 0; i < 1000; i++)
		strbuf_printf(&sb, "%03d,", i);
	assert_int_equal(sb.len, 4000);
	assert_memory_equal(sb.buf, "000,001,002,", 12);
	assert_string_equal(sb.buf + 3996, "999,");
	strbuf_free(&sb);
}

static void test_reset_keeps_buffer(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < 100; i++)
		strbuf_puts(&sb, "0123456789");
	size_t cap = sb.cap;
	char *buf = sb.buf;
	strbuf_reset(&sb);
	assert_int_equal(sb.len, 0);
	assert_string_equal(strbuf_str(&sb), "");
	assert_int_equal(sb.cap, cap);
	assert_ptr_equal(sb.buf, buf);
	strbuf_puts(&sb, "again");
	assert_string_equal(strbuf_str(&sb), "again");
	assert_int_equal(sb.len, 5);
	strbuf_free(&sb);
}

static void vwrap(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vprintf(sb, fmt, ap);
	va_end(ap);
}

static void test_vprintf(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	vwrap(&sb, "%s=%lu", "k", 99ul);
	assert_string_equal(strbuf_str(&sb), "k=99");
	strbuf_free(&sb);
}

static void test_oom_flag_stops_appends(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_puts(&sb, "kept");
	sb.oom = 1; /* as after a failed allocation */
	strbuf_puts(&sb, "dropped");
	strbuf_printf(&sb, "%d", 5);
	strbuf_putc(&sb, 'x');
	assert_string_equal(strbuf_str(&sb), "kept");
	assert_int_equal(sb.len, 4);
	strbuf_free(&sb);
	assert_int_equal(sb.oom, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_append_puts_putc),
		cmocka_unit_test(test_append_zero_terminates),
		cmocka_unit_test(test_append_binary),
		cmocka_unit_test(test_printf),
		cmocka_unit_test(test_printf_growth),
		cmocka_unit_test(test_growth_exact_boundary),
		cmocka_unit_test(test_reset_keeps_buffer),
		cmocka_unit_test(test_vprintf),
		cmocka_unit_test(test_oom_flag_stops_appends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
