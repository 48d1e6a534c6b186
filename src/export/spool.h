/*
 * The remote-write spool: every batch is a file in one directory, written
 * before it is sent and removed once the receiver took it, so nothing is
 * lost while the receiver is down or the agent restarts. Files are named
 * by a sequence number (and the batch's sample count), sent oldest first.
 *
 * Bounded: a batch that would take the spool past max_bytes first drops
 * the oldest batches (not the one being sent), each counted; a batch
 * larger than the whole cap is dropped itself. A file is written under a
 * temporary name and renamed, so a crash leaves whole batches only.
 */
#ifndef NODESCOPE_EXPORT_SPOOL_H
#define NODESCOPE_EXPORT_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strbuf.h"

enum spool_drop {
	SPOOL_DROP_FULL,  /* the oldest, for a new one past the cap (or a new one past it alone) */
	SPOOL_DROP_ERROR, /* not written, or not read back */
	SPOOL_DROP_COUNT,
};

struct spool_entry {
	uint64_t seq;
	uint64_t bytes;
	unsigned samples;
};

struct spool {
	char *dir;
	uint64_t max_bytes;
	struct spool_entry *q; /* oldest first, a ring of cap entries from head */
	size_t head, n, cap;
	uint64_t next_seq;
	uint64_t bytes;		/* what the files hold */
	bool busy;		/* the oldest is being sent: it is not dropped */
	/* Batches and samples dropped, by why (exported by remote_write.c). */
	uint64_t dropped_batches[SPOOL_DROP_COUNT], dropped_samples[SPOOL_DROP_COUNT];
};

/*
 * Creates dir (and its parents) if needed, and takes up the batches a
 * previous run left there, oldest first; a leftover temporary file is
 * removed. Returns 0 or -errno.
 */
int spool_open(struct spool *s, const char *dir, uint64_t max_bytes);
void spool_close(struct spool *s);

/* Adds a batch as the newest. Returns 0, or -errno (counted: the batch is lost). */
int spool_push(struct spool *s, const void *data, size_t len, unsigned samples);
/* The oldest batch, or NULL when empty. */
const struct spool_entry *spool_oldest(const struct spool *s);
/* Reads the oldest batch into out. 0, or -errno: then it is counted and removed. */
int spool_read_oldest(struct spool *s, struct strbuf *out);
/* Removes the oldest batch (sent, or refused for good). */
void spool_pop(struct spool *s);

#endif
