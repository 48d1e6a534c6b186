/* Length-prefixed framing. See frames.h. */
#include "frames.h"

#include <string.h>

void l7_framer_init(struct l7_framer *f, size_t header)
{
	f->lost = false;
	f->in_body = false;
	l7_reader_next(&f->r, L7_U_FIXED, header);
}

void l7_framer_feed(struct l7_framer *f, const struct l7_framing *how, struct l7_counters *cnt,
		    void *state, bool req, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	size_t pos = 0;

	if (f->lost) {
		if (!how->resync(state, data, captured, req))
			return;
		l7_framer_init(f, how->header);
	}
	while (pos < total) {
		enum l7_take t = l7_reader_take(&f->r, data, captured, total, &pos);
		if (t == L7_TAKE_MORE)
			return;
		if (t == L7_TAKE_LOST) {
			cnt->lost++;
			f->lost = true;
			return;
		}
		if (!f->in_body) {
			memcpy(f->hdr, f->r.at, how->header);
			int64_t len = how->body_len(f->hdr, req);
			if (len < 0) {
				cnt->unparseable++;
				f->lost = true;
				return;
			}
			f->in_body = true;
			l7_reader_next(&f->r, L7_U_BODY, (uint64_t)len);
			continue;
		}
		if (f->r.uncaptured)
			cnt->truncated++;
		f->in_body = false;
		if (!how->message(state, f, req, fn, ctx)) {
			cnt->unparseable++;
			f->lost = true;
			return;
		}
		l7_reader_next(&f->r, L7_U_FIXED, how->header);
	}
}
