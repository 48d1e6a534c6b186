/* The operations helpers: gzip negotiation and compression, /healthz, /proc/self/stat, the log. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <zlib.h>

#include "http/gzip.h"
#include "http/routes.h"
#include "metrics/process.h"
#include "util/log.h"

static void test_accepts_gzip(void **state)
{
	assert_false(http_accepts_gzip(NULL));
	assert_false(http_accepts_gzip(""));
	assert_true(http_accepts_gzip("gzip"));
	assert_true(http_accepts_gzip("deflate, gzip"));
	assert_true(http_accepts_gzip("GZIP;q=0.5"));
	assert_true(http_accepts_gzip("x-gzip"));
	assert_true(http_accepts_gzip(" br , gzip ; q=1"));
	assert_true(http_accepts_gzip("*"));
	assert_false(http_accepts_gzip("gzip;q=0"));
	assert_false(http_accepts_gzip("gzip; q=0.000, identity"));
	assert_false(http_accepts_gzip("*, gzip;q=0")); /* named beats the wildcard */
	assert_false(http_accepts_gzip("*;q=0"));
	assert_false(http_accepts_gzip("deflate, br, identity"));
	assert_false(http_accepts_gzip("gzipped, xgzip"));
}

static void test_gzip_round_trip(void **state)
{
	struct strbuf in = STRBUF_INIT, out = STRBUF_INIT;
	for (int i = 0; i < 5000; i++)
		strbuf_printf(&in, "metric_%d{label=\"value\"} %d\n", i % 50, i);
	assert_int_equal(http_gzip(in.buf, in.len, &out), 0);
	assert_true(out.len < in.len / 4);
	assert_int_equal((unsigned char)out.buf[0], 0x1f); /* the gzip magic */
	assert_int_equal((unsigned char)out.buf[1], 0x8b);

	char *back = malloc(in.len + 1);
	z_stream z = { 0 };
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)out.buf;
	z.avail_in = (uInt)out.len;
	z.next_out = (Bytef *)back;
	z.avail_out = (uInt)in.len + 1;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, in.len);
	assert_memory_equal(back, in.buf, in.len);
	inflateEnd(&z);
	free(back);
	strbuf_free(&in);
	strbuf_free(&out);
}

static bool ready_answer;
static bool fake_ready(void *ctx, struct strbuf *why)
{
	if (!ready_answer)
		strbuf_puts(why, "starting or stopping");
	return ready_answer;
}

static void test_healthz(void **state)
{
	struct http_routes r = { .ready = fake_ready };
	struct strbuf body = STRBUF_INIT;
	const char *type = "text/plain";

	ready_answer = false;
	assert_int_equal(http_routes_handle(&r, "/healthz", &body, &type, NULL), 503);
	assert_string_equal(strbuf_str(&body), "not ready: starting or stopping\n");
	strbuf_reset(&body);
	ready_answer = true;
	assert_int_equal(http_routes_handle(&r, "/healthz", &body, &type, NULL), 200);
	assert_string_equal(strbuf_str(&body), "ok\n");
	strbuf_free(&body);
}

static void test_process_stat(void **state)
{
	/* A command name with spaces and a ')' in it; fields as Linux 6.1 writes them. */
	const char *s = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 9338 0 0 0 137 52 0 0 0 -20 3 0 "
			"1234567 46108672 8671 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1\n";
	struct process_stat st;

	assert_int_equal(process_stat_parse(s, &st), 0);
	assert_int_equal(st.utime_ticks, 137);
	assert_int_equal(st.stime_ticks, 52);
	assert_int_equal(st.start_ticks, 1234567);
	assert_int_equal(st.vsize_bytes, 46108672);
	assert_int_equal(st.rss_pages, 8671);
	assert_int_equal(process_stat_parse("4242 (cut", &st), -EINVAL);
	assert_int_equal(process_stat_parse("4242 (x) S 1 2 3", &st), -EINVAL);
	assert_int_equal(process_stat_parse("", &st), -EINVAL);
}

static void test_log_prefix(void **state)
{
	char buf[64];
	/* 2026-12-03T17:33:28.123Z */
	long long t = 1796319208123456789ll;

	log_prefix(buf, sizeof(buf), t, LOG_LEVEL_WARN);
	assert_string_equal(buf, "2026-12-03T17:33:28.123Z warn ");
	log_prefix(buf, sizeof(buf), 0, LOG_LEVEL_INFO);
	assert_string_equal(buf, "1970-01-01T00:00:00.000Z info ");
}

/* The lines the agent wrote to stderr meanwhile: fd 2 goes to a file for the call. */
static char *stderr_of(void (*fn)(void))
{
	static char buf[8192];
	FILE *f = tmpfile();
	assert_non_null(f);
	int fd = dup(fileno(f)), saved = dup(2);
	fclose(f);
	assert_true(fd >= 0 && saved >= 0);
	assert_int_equal(dup2(fd, 2), 2);
	fn();
	assert_int_equal(dup2(saved, 2), 2);
	close(saved);
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static unsigned count_of(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void burst_of_five(void)
{
	/* no refill to speak of: 3 go out, 2 are held back */
	log_rate_limit(1e-9, 3);
	for (int i = 0; i < 5; i++)
		log_info("line %d", i);
}

static void one_after_a_refill(void)
{
	log_rate_limit(1e9, 1); /* full again at once */
	log_info("after");
}

/* Coroot's --log-per-second / --log-burst: a token bucket; what it holds back is counted and said. */
static void test_log_rate_limit(void **state)
{
	unsigned long long before = log_suppressed_total();
	const char *out = stderr_of(burst_of_five);

	assert_int_equal(count_of(out, " info nodescope: line "), 3);
	assert_non_null(strstr(out, "line 2\n"));
	assert_null(strstr(out, "line 3"));
	assert_int_equal(log_suppressed_total() - before, 2);
	/* a new limit keeps the count of lines not said yet: the next line says it */
	log_rate_limit(1e-9, 0);
	out = stderr_of(one_after_a_refill);
	assert_non_null(strstr(out, "nodescope: 2 log lines not written (--log-per-second, "
				    "--log-burst)\n"));
	assert_non_null(strstr(out, "nodescope: after\n"));
	assert_int_equal(log_suppressed_total() - before, 2);
	log_rate_limit(1e9, 1000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_gzip),   cmocka_unit_test(test_gzip_round_trip),
		cmocka_unit_test(test_healthz),	       cmocka_unit_test(test_process_stat),
		cmocka_unit_test(test_log_prefix),     cmocka_unit_test(test_log_rate_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
