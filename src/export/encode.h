/*
 * One collection of the registry as Prometheus remote-write requests: a
 * protobuf WriteRequest (remote.proto) per batch, compressed with snappy's
 * block format, handed to a sink. Pure: no I/O.
 *
 * Batches are cut so none has more than max_series samples or (before
 * compression) more than max_bytes: a receiver refuses a request past its
 * own size limit, so a large node becomes several requests, in order. Each
 * batch is packed as concatenated one-series WriteRequests, which protobuf
 * reads as one message with all of them (repeated fields concatenate), so
 * a sample is packed once and nothing is copied to build a request.
 */
#ifndef NODESCOPE_EXPORT_ENCODE_H
#define NODESCOPE_EXPORT_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/registry.h"
#include "util/strbuf.h"

/* gRPC's default message limit, which receivers behind gRPC (Mimir, Cortex, Thanos) keep. */
#define RW_MAX_REQUEST_BYTES (4u << 20)

/* A finished batch: snappy-compressed WriteRequest; returns 0 or -errno. */
typedef int (*rw_batch_fn)(void *ctx, const void *data, size_t len, unsigned samples);

struct rw_encoder_opts {
	unsigned max_series;	/* samples per request (one sample per series) */
	size_t max_bytes;	/* uncompressed bytes per request (0: RW_MAX_REQUEST_BYTES) */
	const char *job;	/* added to every series, as a scrape would */
	const char *instance;
	rw_batch_fn batch;
	void *batch_ctx;
};

struct rw_encoder {
	struct rw_encoder_opts o;
	int64_t ts_ms;
	struct strbuf raw;	/* the batch being built, uncompressed */
	unsigned n;		/* samples in it */
	uint8_t *piece;		/* one packed series */
	size_t piece_len, piece_cap;
	uint8_t *md;		/* one packed family metadata */
	size_t md_len, md_cap;
	char *compressed;
	size_t compressed_cap;
	/* The family being walked, and whether its metadata is in the batch yet. */
	const char *fam_name, *fam_help;
	enum metric_type fam_type;
	bool fam_sent;
	int err;		/* first error of the sink or of memory, 0 if none */
	/* Totals of this collection. */
	unsigned long long samples, batches, raw_bytes, wire_bytes;
};

void rw_encoder_init(struct rw_encoder *e, const struct rw_encoder_opts *o);
void rw_encoder_free(struct rw_encoder *e);

/* A collection at wall-clock time ts_ms: its counters start at 0. */
void rw_encoder_begin(struct rw_encoder *e, int64_t ts_ms);
void rw_encoder_family(struct rw_encoder *e, const char *name, const char *help,
		       enum metric_type type);
void rw_encoder_sample(struct rw_encoder *e, const struct metric_sample *s);
/* Hands the last batch to the sink; returns e->err. */
int rw_encoder_end(struct rw_encoder *e);

/* The registry's walk into the encoder (begin/end are the caller's). */
void rw_encoder_visitor(struct rw_encoder *e, struct metric_visitor *v);

#endif
