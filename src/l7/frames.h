/*
 * Length-prefixed framing on the unit reader, for the binary protocols whose
 * every message is a fixed header telling its body's length (Kafka,
 * ZooKeeper, MongoDB): the loop from chunks to whole messages, its drop
 * counting, and the wait for a resynchronisation point once framing is lost.
 */
#ifndef NODESCOPE_L7_FRAMES_H
#define NODESCOPE_L7_FRAMES_H

#include "proto.h"
#include "reader.h"

#define L7_FRAME_HEADER_MAX 16

struct l7_framer {
	struct l7_reader r; /* the header, then the body's kept bytes */
	uint8_t hdr[L7_FRAME_HEADER_MAX];
	bool lost; /* framing lost: waiting for a chunk `resync` accepts */
	bool in_body;
};

/* One protocol's framing; state is the parser's, req the direction. */
struct l7_framing {
	size_t header; /* <= L7_FRAME_HEADER_MAX */
	/* The body's length a header gives, or -1 when it is not a valid header. */
	int64_t (*body_len)(const uint8_t *hdr, bool req);
	/* Whether a message begins at data: where a lost direction picks up again. */
	bool (*resync)(void *state, const uint8_t *data, size_t captured, bool req);
	/* A whole message (header in f->hdr, body in f->r); false: unparseable. */
	bool (*message)(void *state, struct l7_framer *f, bool req, l7_msg_fn fn, void *ctx);
};

/* Ready for the first header (of `header` bytes, the framing's). */
void l7_framer_init(struct l7_framer *f, size_t header);
/* Feeds a chunk (data holds its first `captured` of `total` bytes). */
void l7_framer_feed(struct l7_framer *f, const struct l7_framing *how, struct l7_counters *cnt,
		    void *state, bool req, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx);

#endif
