/* Request/response pairing. See pair.h. */
#include "pair.h"

#include <stdlib.h>
#include <string.h>

void l7_pair_init(struct l7_pair *p, enum l7_pair_mode mode, struct l7_counters *cnt)
{
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->cnt = cnt;
}

void l7_pair_reset(struct l7_pair *p)
{
	p->head = p->n = 0;
	p->ghosts = 0;
}

void l7_pair_free(struct l7_pair *p)
{
	free(p->q);
	p->q = NULL;
	p->cap = p->head = p->n = 0;
}

/* The ring's size is a power of two (L7_PAIR_FIRST doubled): a mask, not a division, per look. */
_Static_assert((L7_PAIR_FIRST & (L7_PAIR_FIRST - 1)) == 0 && (L7_PAIR_MAX & (L7_PAIR_MAX - 1)) == 0,
	       "powers of two");

static struct l7_pending *at(struct l7_pair *p, unsigned i)
{
	return &p->q[(p->head + i) & (p->cap - 1)];
}

static void drop_head(struct l7_pair *p)
{
	p->head = (p->head + 1) & (p->cap - 1);
	p->n--;
}

/* Room for one more: doubles the ring (oldest first again) up to L7_PAIR_MAX. */
static bool room(struct l7_pair *p)
{
	if (p->n < p->cap)
		return true;
	if (p->cap >= L7_PAIR_MAX)
		return false;
	unsigned cap = p->cap ? p->cap * 2 : L7_PAIR_FIRST;
	struct l7_pending *q = malloc(cap * sizeof(*q));
	if (!q)
		return false;
	for (unsigned i = 0; i < p->n; i++)
		q[i] = *at(p, i);
	free(p->q);
	p->q = q;
	p->cap = cap;
	p->head = 0;
	return true;
}

int l7_pair_request(struct l7_pair *p, const struct l7_msg *m, uint64_t ts_ns)
{
	if (m->kind != L7_MSG_REQUEST && m->kind != L7_MSG_REQUEST_UNTIL_SYNC &&
	    m->kind != L7_MSG_SYNC)
		return 0;
	bool has_room = room(p);
	if (p->mode == L7_PAIR_FIFO && (!has_room || p->ghosts)) {
		/* keep its place so later responses still pair with the right requests */
		p->ghosts++;
		if (p->cnt)
			p->cnt->table_full++;
		return -1;
	}
	if (!has_room) {
		/* by id: the oldest is the likeliest never to be answered */
		if (!p->n)
			return -1; /* no memory for a first one */
		drop_head(p);
		if (p->cnt)
			p->cnt->table_full++;
	}
	struct l7_pending *e = at(p, p->n++);
	e->kind = m->kind;
	e->has_id = m->has_id;
	e->id = m->id;
	e->ts_ns = ts_ns;
	e->status = L7_STATUS_OK;
	e->code[0] = '\0';
	/* strings, not their buffers: a statement is rarely a tenth of its 256 bytes */
	l7_join(e->op, sizeof(e->op), m->op, NULL);
	l7_join(e->text, sizeof(e->text), m->text, NULL);
	return 0;
}

static void unpaired(struct l7_pair *p)
{
	if (p->cnt)
		p->cnt->unpaired++;
}

static void by_id(struct l7_pair *p, const struct l7_msg *m, l7_pair_fn fn, void *ctx)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct l7_pending *e = at(p, i);
		if (!e->has_id || !m->has_id || e->id != m->id)
			continue;
		fn(ctx, e, m->status, m->code, false);
		/* close the gap, keeping the order */
		for (unsigned j = i; j + 1 < p->n; j++)
			*at(p, j) = *at(p, j + 1);
		p->n--;
		return;
	}
	unpaired(p);
}

static void fold(struct l7_pending *e, const struct l7_msg *m)
{
	if (m->status == L7_STATUS_FAILED && e->status != L7_STATUS_FAILED) {
		e->status = L7_STATUS_FAILED;
		memcpy(e->code, m->code, sizeof(e->code));
	}
}

void l7_pair_response(struct l7_pair *p, const struct l7_msg *m, l7_pair_fn fn, void *ctx)
{
	if (m->kind == L7_MSG_LOST && p->mode == L7_PAIR_FIFO) {
		/* in order, an unseen message would shift every pair after it */
		l7_pair_reset(p);
		return;
	}
	if (m->kind != L7_MSG_RESPONSE && m->kind != L7_MSG_SYNC_REPLY)
		return;
	if (p->mode == L7_PAIR_BY_ID) {
		by_id(p, m, fn, ctx);
		return;
	}
	if (m->kind == L7_MSG_RESPONSE) {
		if (!p->n) {
			if (p->ghosts)
				p->ghosts--; /* the answer to a request the queue had no room for */
			else
				unpaired(p);
			return;
		}
		struct l7_pending *e = at(p, 0);
		if (e->kind == L7_MSG_REQUEST_UNTIL_SYNC) {
			fold(e, m);
			return;
		}
		if (e->kind == L7_MSG_SYNC)
			return; /* a reply to something untracked before the barrier (a Parse alone) */
		/* fn sees the entry in place: it never touches the queue */
		fn(ctx, e, m->status, m->code, false);
		drop_head(p);
		return;
	}
	/* SYNC_REPLY: up to and including the oldest barrier */
	if (!p->n) {
		p->ghosts = 0; /* a known point: what the full queue lost is over */
		return;
	}
	while (p->n) {
		struct l7_pending *e = at(p, 0);
		if (e->kind == L7_MSG_SYNC) {
			drop_head(p);
			return;
		}
		if (e->kind == L7_MSG_REQUEST_UNTIL_SYNC) {
			fold(e, m);
			fn(ctx, e, e->status, e->code, false);
			drop_head(p);
			return;
		}
		fn(ctx, e, L7_STATUS_FAILED, "", true);
		drop_head(p);
	}
}
