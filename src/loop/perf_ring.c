#include "perf_ring.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct perf_cpu {
	int fd;
	struct perf_event_mmap_page *meta; /* then cpu_bytes of data */
	uint8_t *data;
	uint64_t head; /* snapshot taken by the current read */
};

/* A record found by a read: where it is, and its place in time. */
struct perf_rec {
	uint64_t time;
	uint64_t seq; /* CPU and position: ties (and untimed rings) keep buffer order */
	uint64_t pos; /* of its data in its CPU's buffer */
	uint32_t cpu;
	uint32_t len;
};

/*
 * A record's data sits 4 bytes past an 8-byte boundary in a perf buffer (after
 * the sample's u32 size), and may wrap round the buffer's end: each is copied
 * here, aligned as in a ring buffer, before it is handed out. A perf record
 * is at most 64 KiB (its header's size is a u16).
 */
#define PERF_REC_MAX 65536

struct perf_ring {
	struct perf_ring_opts o;
	int epfd;
	long page;
	int ncpu;
	struct perf_cpu *cpus;
	struct perf_rec *recs;
	size_t n_recs, cap_recs;
	uint64_t *copy; /* PERF_REC_MAX bytes: the record being handed out */
};

static int perf_cpu_open(struct perf_ring *r, int cpu, struct perf_cpu *c)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_BPF_OUTPUT,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW | (r->o.timestamps ? PERF_SAMPLE_TIME : 0),
		/* One clock on every CPU, so records of different CPUs can be ordered. */
		.use_clockid = r->o.timestamps ? 1 : 0,
		.clockid = CLOCK_MONOTONIC,
	};
	if (r->o.wake_bytes) {
		a.watermark = 1;
		a.wakeup_watermark = (uint32_t)r->o.wake_bytes;
	} else {
		a.wakeup_events = r->o.wake_records ? r->o.wake_records : 1;
	}
	c->fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	size_t len = r->page + r->o.cpu_bytes;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	c->meta = m;
	c->data = (uint8_t *)m + r->page;
	uint32_t key = cpu, fd = c->fd;
	if (bpf_map_update_elem(r->o.map_fd, &key, &fd, BPF_ANY))
		return -errno;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = cpu };
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, c->fd, &ev))
		return -errno;
	return 0;
}

int perf_ring_open(const struct perf_ring_opts *o, struct perf_ring **out)
{
	struct perf_ring *r = calloc(1, sizeof(*r));
	int err = 0;

	if (!r)
		return -ENOMEM;
	r->o = *o;
	r->page = sysconf(_SC_PAGESIZE);
	r->epfd = -1;
	if (o->cpu_bytes < r->page || (o->cpu_bytes & (o->cpu_bytes - 1)) ||
	    o->wake_bytes >= o->cpu_bytes) {
		err = -EINVAL;
		goto fail;
	}
	r->ncpu = libbpf_num_possible_cpus();
	if (r->ncpu <= 0) {
		err = r->ncpu ? r->ncpu : -EINVAL;
		goto fail;
	}
	r->cpus = calloc(r->ncpu, sizeof(*r->cpus));
	r->copy = malloc(PERF_REC_MAX);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!r->cpus || !r->copy || r->epfd < 0) {
		err = r->cpus && r->copy ? -errno : -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < r->ncpu; i++)
		r->cpus[i].fd = -1;
	int opened = 0;
	for (int i = 0; i < r->ncpu; i++) {
		err = perf_cpu_open(r, i, &r->cpus[i]);
		/* A possible CPU that is offline has no event: nothing runs there. */
		if (err == -ENODEV) {
			err = 0;
			continue;
		}
		if (err)
			goto fail;
		opened++;
	}
	if (!opened) {
		err = -ENODEV;
		goto fail;
	}
	*out = r;
	return 0;
fail:
	perf_ring_free(r);
	return err;
}

void perf_ring_free(struct perf_ring *r)
{
	if (!r)
		return;
	for (int i = 0; r->cpus && i < r->ncpu; i++) {
		struct perf_cpu *c = &r->cpus[i];
		if (c->meta)
			munmap(c->meta, r->page + r->o.cpu_bytes);
		if (c->fd >= 0)
			close(c->fd);
	}
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->cpus);
	free(r->recs);
	free(r->copy);
	free(r);
}

int perf_ring_fd(const struct perf_ring *r)
{
	return r->epfd;
}

/* The CPU's head now; what the kernel wrote before it is complete. */
static uint64_t perf_cpu_head(struct perf_cpu *c)
{
	return __atomic_load_n(&c->meta->data_head, __ATOMIC_ACQUIRE);
}

static void perf_cpu_release(struct perf_cpu *c, uint64_t upto)
{
	__atomic_store_n(&c->meta->data_tail, upto, __ATOMIC_RELEASE);
}

static bool perf_ring_grow(void **buf, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *p = realloc(*buf, n * elem);
	if (!p)
		return false;
	*buf = p;
	*cap = n;
	return true;
}

/* Copies len bytes at pos (which may wrap) out of the CPU's buffer. */
static void perf_cpu_copy(const struct perf_ring *r, const struct perf_cpu *c, uint64_t pos,
			  void *dst, size_t len)
{
	size_t mask = r->o.cpu_bytes - 1, off = pos & mask, first = r->o.cpu_bytes - off;
	if (first > len)
		first = len;
	memcpy(dst, c->data + off, first);
	memcpy((uint8_t *)dst + first, c->data, len - first);
}

/*
 * Finds the CPU's records up to its head snapshot. Returns false when out of
 * memory (the rest of this CPU is left for the next read).
 */
static bool perf_cpu_collect(struct perf_ring *r, int cpu, uint64_t *stop)
{
	struct perf_cpu *c = &r->cpus[cpu];
	uint64_t pos = c->meta->data_tail;
	size_t hdr_extra = r->o.timestamps ? sizeof(uint64_t) : 0;

	while (pos < c->head) {
		struct perf_event_header h;
		perf_cpu_copy(r, c, pos, &h, sizeof(h));
		if (h.size < sizeof(h) || pos + h.size > c->head)
			break; /* cannot be: the kernel writes whole records */
		/*
		 * Other records are skipped: PERF_RECORD_LOST says late what the
		 * BPF side counted as it happened (bpf_perf_event_output failed).
		 */
		if (h.type == PERF_RECORD_SAMPLE &&
			   h.size >= sizeof(h) + hdr_extra + sizeof(uint32_t)) {
			if (!perf_ring_grow((void **)&r->recs, &r->cap_recs, r->n_recs + 1,
					    sizeof(*r->recs)))
				break;
			struct perf_rec *rec = &r->recs[r->n_recs];
			uint64_t time = 0;
			uint32_t size;
			uint64_t p = pos + sizeof(h);
			if (hdr_extra) {
				perf_cpu_copy(r, c, p, &time, sizeof(time));
				p += sizeof(time);
			}
			perf_cpu_copy(r, c, p, &size, sizeof(size));
			p += sizeof(size);
			if (size > h.size - (p - pos))
				size = h.size - (p - pos);
			*rec = (struct perf_rec){ .time = time,
						  .seq = ((uint64_t)cpu << 48) | (pos & 0xffffffffffffull),
						  .pos = p,
						  .cpu = cpu,
						  .len = size };
			r->n_recs++;
		}
		pos += h.size;
	}
	*stop = pos;
	return pos == c->head;
}

static int perf_rec_cmp(const void *a, const void *b)
{
	const struct perf_rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

uint64_t perf_ring_consume(struct perf_ring *r, perf_ring_record_fn fn, void *ctx)
{
	uint64_t stops[r->ncpu];

	/*
	 * Every head first, in one quick pass, then the records: a record
	 * written on one CPU because of one already written on another (a
	 * child's exec after its fork) is then never read without it.
	 */
	for (int i = 0; i < r->ncpu; i++)
		if (r->cpus[i].meta)
			r->cpus[i].head = perf_cpu_head(&r->cpus[i]);
	r->n_recs = 0;
	for (int i = 0; i < r->ncpu; i++) {
		stops[i] = 0;
		if (r->cpus[i].meta)
			perf_cpu_collect(r, i, &stops[i]);
	}
	if (r->n_recs > 1)
		qsort(r->recs, r->n_recs, sizeof(*r->recs), perf_rec_cmp);
	for (size_t i = 0; i < r->n_recs; i++) {
		struct perf_rec *rec = &r->recs[i];
		perf_cpu_copy(r, &r->cpus[rec->cpu], rec->pos, r->copy, rec->len);
		fn(ctx, r->copy, rec->len);
	}
	for (int i = 0; i < r->ncpu; i++)
		if (r->cpus[i].meta)
			perf_cpu_release(&r->cpus[i], stops[i]);
	return r->n_recs;
}

void perf_ring_discard(struct perf_ring *r)
{
	for (int i = 0; i < r->ncpu; i++)
		if (r->cpus[i].meta)
			perf_cpu_release(&r->cpus[i], perf_cpu_head(&r->cpus[i]));
}
