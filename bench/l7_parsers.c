/*
 * The database parsers' cost (bench/l7-parsers builds and runs this): each
 * capture of tests/unit/data/l7 fed through its protocol's parser and the
 * pairing, over and over, its thread CPU time measured. Prints one Markdown
 * row per capture.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "l7/pair.h"
#include "l7/proto.h"

#define MAX_CHUNKS 256

struct chunk {
	enum l7_dir dir;
	uint8_t *p;
	size_t n;
};

static uint64_t msgs, pairs;

static void on_pair(void *ctx, const struct l7_pending *req, enum l7_status st, const char *code,
		    bool skipped)
{
	pairs++;
}

static void on_msg(void *ctx, const struct l7_msg *m)
{
	msgs++;
	l7_pair_request(ctx, m, 0);
	l7_pair_response(ctx, m, on_pair, NULL);
}

static size_t load(const char *path, int conn, struct chunk *c)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = 0;
	if (!f) {
		perror(path);
		exit(1);
	}
	while (getline(&line, &cap, f) > 0 && n < MAX_CHUNKS) {
		int k;
		char *sp = strchr(line, ' ');
		if (!sp || sscanf(line, "%d", &k) != 1 || k != conn)
			continue;
		size_t hl = strcspn(sp + 1, "\r\n");
		c[n].dir = sp[-1] == '>' ? L7_DIR_REQUEST : L7_DIR_RESPONSE;
		c[n].p = malloc(hl / 2 + 1);
		c[n].n = hl / 2;
		for (size_t i = 0; i + 1 < hl; i += 2) {
			unsigned b;
			sscanf(sp + 1 + i, "%2x", &b);
			c[n].p[i / 2] = (uint8_t)b;
		}
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

static double cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	/* argv: iterations, then proto path conn triples */
	int iters = atoi(argv[1]);
	printf("| protocol | capture | bytes | messages | pairs | ns/message | MB/s | state bytes |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
	for (int a = 2; a + 2 < argc; a += 3) {
		const struct l7_proto *p = l7_proto_by_name(argv[a]);
		static struct chunk c[MAX_CHUNKS];
		size_t n = load(argv[a + 1], atoi(argv[a + 2]), c), bytes = 0;
		void *st = malloc(p->state_size);
		struct l7_pair pair;
		for (size_t i = 0; i < n; i++)
			bytes += c[i].n;
		msgs = pairs = 0;
		double t0 = cpu_ns();
		for (int it = 0; it < iters; it++) {
			p->init(st);
			l7_pair_init(&pair, p->pair, p->counters(st));
			for (size_t i = 0; i < n; i++)
				l7_proto_feed(p, st, c[i].dir, c[i].p, c[i].n, c[i].n, on_msg, &pair);
			if (p->free) /* parsers that allocate nothing have none */
				p->free(st);
			l7_pair_free(&pair);
		}
		double ns = cpu_ns() - t0;
		const char *name = strrchr(argv[a + 1], '/');
		printf("| %s | %s | %zu | %llu | %llu | %.0f | %.0f | %zu |\n", p->name, name ? name + 1 : argv[a + 1],
		       bytes, (unsigned long long)(msgs / iters), (unsigned long long)(pairs / iters),
		       msgs ? ns / (double)msgs : 0, (double)bytes * iters / ns * 1e3, p->state_size);
		for (size_t i = 0; i < n; i++)
			free(c[i].p);
		free(st);
	}
	return 0;
}
