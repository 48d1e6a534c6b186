#include "stream.h"

#include "perf_ring.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * How late the tcp stream's records may be read. 50 ms against 10: an exec at
 * 100 a second cost 18.7 CPU-us against 68.6, with 19 wakeups a second
 * against 90 (bench/exec, BENCHMARKS.md, when proc had this period too). What
 * cannot wait that long goes on the files stream, read at once: a short-lived
 * container's name comes from its cgroups and its runtime's state files,
 * which `ctr run --rm` removes within tens of ms of the exit, so a set of
 * cgroups' first exec is reported there (e2e test_container_named_at_its_
 * first_exec_though_its_cgroup_is_gone_when_the_exec_is_read).
 */
#define NS_BATCH_DELAY_NS 50000000

/*
 * The proc stream's: a wakeup costs the same whether it reads 3 records or
 * 50 (~200 us on a slow VM: the agent's user side per record is ~1 us), so
 * under a steady exec load the period sets the cost. 100 ms against 50, side
 * by side (bench/exec, BENCHMARKS.md, session 17): an exec at 100 a second
 * 23.0 CPU-us against 34.3 (execsnoop 67.8), at 5 a second 377 against 486,
 * 10 wakeups a second against 19.5 at every rate. Nothing waits on these
 * records but the trace line (a reader that needs the processes first, a
 * tcp or l7 read, reads proc before itself).
 */
#define NS_PROC_BATCH_DELAY_NS 100000000

/*
 * The l7 stream's: at 50 ms a busy server's batch reaches the stream's
 * watermark (some 3,500 HTTP requests), and reading that many at once, at
 * nice -20, holds the server off its CPU: nginx's p99 latency rose from
 * 0.70-0.83 ms to 0.84-1.30 and its throughput fell (bench/http, 2026-12-05).
 */
#define NS_L7_BATCH_DELAY_NS 10000000

const struct stream_def stream_defs[NS_STREAM_COUNT] = {
	/*
	 * Nothing in an exec, fork or exit needs acting on at once: the cgroup
	 * ids in the records name the container even after the process is gone,
	 * and a new program's TLS libraries and a new container's first exec
	 * come through the files stream. So at most 100 ms late, or sooner once
	 * 512 KiB (some 700 execs) wait.
	 */
	[NS_STREAM_PROC] = { "proc", NS_STREAM_PROC,
			     { .kind = NS_WAKEUP_BATCHED, .max_delay_ns = NS_PROC_BATCH_DELAY_NS,
			       .watermark = 512 * 1024 },
			     2 << 20 },
	/* High rate: at most 50 ms late, or sooner once 64 KiB are pending. */
	[NS_STREAM_TCP] = { "tcp", NS_STREAM_TCP,
			    { .kind = NS_WAKEUP_BATCHED, .max_delay_ns = NS_BATCH_DELAY_NS,
			      .watermark = 64 * 1024 },
			    1 << 20 },
	/* Payload prefixes: the highest rate of all, so the biggest ring. */
	[NS_STREAM_L7] = { "l7", NS_STREAM_L7,
			   { .kind = NS_WAKEUP_BATCHED, .max_delay_ns = NS_L7_BATCH_DELAY_NS,
			     .watermark = 1 << 20 },
			   8 << 20, .bulk = true },
	/*
	 * Rare and urgent: a file's first mapping (its TLS calls may follow at
	 * once), a set of cgroups' first exec (the container may be gone soon).
	 */
	[NS_STREAM_FILES] = { "files", NS_STREAM_FILES,
			      { .kind = NS_WAKEUP_IMMEDIATE, .watermark = 16 * 1024 }, 256 << 10 },
};

uint64_t stream_watermark(const struct stream_def *d, uint64_t ring_size)
{
	uint64_t half = ring_size / 2;
	return d->policy.watermark < half ? d->policy.watermark : half;
}

uint32_t stream_perf_cpu_bytes(uint64_t ring_size, int ncpu)
{
	uint64_t share = ncpu > 0 ? ring_size / (uint64_t)ncpu : ring_size, n = STREAM_PERF_MIN_CPU_BYTES;
	while (n < share && n < (1u << 30))
		n <<= 1;
	return (uint32_t)n;
}

const struct stream_def *stream_def_find(const char *name)
{
	for (int i = 0; i < NS_STREAM_COUNT; i++)
		if (stream_defs[i].name && !strcmp(stream_defs[i].name, name))
			return &stream_defs[i];
	return NULL;
}

struct stream {
	struct loop *loop;
	struct stream_params p;
	struct ring_buffer *rb;
	int ring_fd;
	int lost_fd;
	long page;
	/* Read-only views of the ring's positions, to know how much is pending. */
	const volatile unsigned long *consumer_pos;
	const volatile unsigned long *producer_pos;
	struct loop_timer *flush;
	/* Kernels without ring buffers: the records, the doorbell, its state. */
	struct perf_ring *perf;
	struct perf_ring *bell;
	volatile struct ns_reader_state *bell_state; /* mapped from the BPF array */
	bool quiet_batches; /* a batched ring-buffer stream: batch_open is used */
	bool batch_held;    /* its open batch holds the loop thread at the bulk priority */
	unsigned empty_ticks; /* timer reads in a row that found nothing */
	struct stream_policy policy; /* the definition's, watermark fitted to the ring */
	bool draining;
	bool before_running;
	uint64_t events;
	uint64_t malformed;
	uint64_t wakeups;
};

static int stream_on_record(void *ctx, void *data, size_t len)
{
	struct stream *s = ctx;
	if (!len)
		return 0; /* a writer's wakeup, no record (bpf/common.bpf.h, *_output) */
	s->events++;
	if (s->p.fn(s->p.ctx, data, len) < 0)
		s->malformed++;
	return 0;
}

#define STREAM_EMPTY_TICKS 2

static uint64_t stream_pending(const struct stream *s)
{
	/* Perf buffers: only the bell wakes a reader that waits (below). */
	return s->perf ? 0 : *s->producer_pos - *s->consumer_pos;
}

/*
 * Perf buffers: the next record wakes the reader again. Set before the
 * buffers are read, with a full barrier between (the BPF side's locked add
 * is the other one), so a record is either read now or rings the bell.
 */
static void stream_perf_rearm(struct stream *s)
{
	__atomic_store_n(&s->bell_state->armed, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/*
 * After a read of a batched ring-buffer stream: while records keep coming,
 * the batch stays open and the timer reads the next ones (writers wake
 * nobody meanwhile). When a read found nothing, the batch closes, unless
 * something was reserved meanwhile (struct ns_reader_state says why this
 * order is race-free). A closed batch leaves no timer armed.
 */
static void stream_batch_settle(struct stream *s, bool found)
{
	/*
	 * Closed only after STREAM_EMPTY_TICKS empty reads in a row: at a few
	 * dozen events a second, closing at the first would cost a wakeup per
	 * event plus two reads, more than the timer's reads.
	 */
	s->empty_ticks = found ? 0 : s->empty_ticks + 1;
	if (!found && s->empty_ticks < STREAM_EMPTY_TICKS)
		return;
	if (!found) {
		__atomic_store_n(&s->bell_state->batch_open, 0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (!stream_pending(s)) {
			loop_timer_disarm(s->flush);
			return;
		}
	}
	__atomic_store_n(&s->bell_state->batch_open, 1, __ATOMIC_RELAXED);
	if (!loop_timer_armed(s->flush))
		loop_timer_arm_every(s->flush, s->policy.max_delay_ns);
}

/*
 * The loop thread's priority follows the batches (src/loop/nice.h): a bulk
 * stream whose timer is armed holds it at the bulk priority.
 */
static void stream_hold_update(struct stream *s)
{
	bool open = s->p.def->bulk && !s->p.debug_poll_ns && loop_timer_armed(s->flush);
	if (open == s->batch_held)
		return;
	s->batch_held = open;
	if (open)
		nice_batch_opened(s->p.nice);
	else
		nice_batch_closed(s->p.nice);
}

/*
 * before_drain runs before this stream counts as draining: what it reads may
 * need this stream read first (a process exit read from proc drains tcp,
 * whose close of a connection drains l7 before forgetting the connection).
 * Were l7 marked busy by then, its records of that connection would be read
 * after the connection was forgotten, and its last response lost.
 */
static void stream_consume(struct stream *s, bool from_timer)
{
	if (s->draining)
		return; /* libbpf's consumer is not re-entrant */
	struct nice_switch *urgent = s->policy.kind == NS_WAKEUP_IMMEDIATE ? s->p.nice : NULL;
	nice_urgent_enter(urgent);
	if (s->p.before_drain && !s->before_running) {
		s->before_running = true;
		s->p.before_drain(s->p.before_drain_ctx);
		s->before_running = false;
	}
	s->draining = true;
	uint64_t before = s->events;
	if (s->perf) {
		if (!s->p.debug_poll_ns)
			stream_perf_rearm(s);
		perf_ring_consume(s->perf, stream_on_record, s);
	} else {
		ring_buffer__consume(s->rb);
	}
	s->draining = false;
	/* Only the batch's own timer closes it: a read on demand (another
	 * stream's hook) finding nothing says nothing of the next period. */
	if (s->quiet_batches && (s->events != before || from_timer))
		stream_batch_settle(s, s->events != before);
	if (s->p.after_drain)
		s->p.after_drain(s->p.after_drain_ctx);
	nice_urgent_leave(urgent);
	stream_hold_update(s);
}

void stream_drain(struct stream *s)
{
	/* In polling mode the timer is the poll period: it keeps running; a
	 * quiet batch decides after the read. */
	if (!s->p.debug_poll_ns && !s->quiet_batches)
		loop_timer_disarm(s->flush);
	stream_consume(s, false);
}

static void stream_on_timer(void *ctx)
{
	struct stream *s = ctx;
	stream_consume(s, true); /* ends with stream_hold_update: a polled stream never holds */
	if (s->p.debug_poll_ns)
		loop_timer_arm(s->flush, s->p.debug_poll_ns);
}

static void stream_on_ring(void *ctx, uint32_t events)
{
	struct stream *s = ctx;

	s->wakeups++;
	switch (stream_policy_on_wakeup(&s->policy, loop_timer_armed(s->flush),
					stream_pending(s))) {
	case STREAM_DRAIN:
		stream_drain(s);
		break;
	case STREAM_ARM_TIMER:
		if (s->quiet_batches) {
			__atomic_store_n(&s->bell_state->batch_open, 1, __ATOMIC_RELAXED);
			loop_timer_arm_every(s->flush, s->policy.max_delay_ns);
		} else {
			loop_timer_arm(s->flush, s->policy.max_delay_ns);
		}
		break;
	case STREAM_WAIT:
		break;
	}
	stream_hold_update(s);
}

/*
 * Perf buffers, the bell: a record landed in buffers the reader had emptied.
 * The same decision as a ring buffer's wakeup, with nothing known pending.
 */
static void stream_on_bell(void *ctx, uint32_t events)
{
	struct stream *s = ctx;

	perf_ring_discard(s->bell);
	stream_on_ring(ctx, events);
}

/* Perf buffers: a CPU's buffer passed the watermark. */
static void stream_on_perf_full(void *ctx, uint32_t events)
{
	struct stream *s = ctx;

	s->wakeups++;
	stream_drain(s);
}

/*
 * Kernels before 5.8. How the reader is woken: a perf buffer wakes its
 * reader every wakeup_events records or past wakeup_watermark bytes, and
 * every wakeup is an irq_work (an interrupt on x86) in the writer's path,
 * whether anyone waits or not. Waking per record (wakeup_events 1) was
 * measured here: nginx under wrk (16 connections, 5 s, 3 runs, medians) went
 * from 22754 requests/s to 8580, the agent woke 154315 times instead of 559
 * for the l7 stream and spent 34 us per request instead of 8. Waking only
 * past a watermark would leave a lone record unread for ever (no timer at
 * rest). So the records' buffers wake only past the stream's watermark (its
 * "immediate" safety net or its batch size, per CPU), and a second perf
 * buffer, the bell, gets one record — one wakeup — only when the reader had
 * emptied everything and said so (ns_reader_state.armed): the ring buffer's
 * flag-0 wakeup, kept for the first record after a read.
 */
static int stream_open_perf(struct stream *s, const struct stream_params *p)
{
	struct perf_ring_opts data = {
		.map_fd = bpf_map__fd(p->ring),
		.cpu_bytes = p->perf_cpu_bytes,
		.wake_bytes = stream_watermark(p->def, p->perf_cpu_bytes), /* half at most */
		.timestamps = 1,
	};
	struct perf_ring_opts bell = {
		.map_fd = bpf_map__fd(p->bell),
		.cpu_bytes = s->page,
		.wake_records = 1,
	};
	int err;

	/* Mapped, not updated through bpf(): re-arming is on every drain. */
	void *st = mmap(NULL, s->page, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(p->bell_state), 0);
	if (st == MAP_FAILED)
		return -errno;
	s->bell_state = st;
	s->policy.watermark = data.wake_bytes;
	if ((err = perf_ring_open(&data, &s->perf)) || (err = perf_ring_open(&bell, &s->bell)))
		return err;
	if (p->debug_poll_ns)
		return 0;
	stream_perf_rearm(s);
	if ((err = loop_add_fd(s->loop, perf_ring_fd(s->bell), EPOLLIN | EPOLLET, stream_on_bell, s)))
		return err;
	return loop_add_fd(s->loop, perf_ring_fd(s->perf), EPOLLIN | EPOLLET, stream_on_perf_full, s);
}

int stream_open(struct loop *l, const struct stream_params *p, struct stream **out)
{
	struct stream *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->loop = l;
	s->p = *p;
	s->page = sysconf(_SC_PAGESIZE);
	s->ring_fd = bpf_map__fd(p->ring);
	s->lost_fd = bpf_map__fd(p->lost);
	s->policy = p->def->policy;
	s->policy.watermark = stream_watermark(p->def, bpf_map__max_entries(p->ring));
	if (p->debug_batch_ns && s->policy.kind == NS_WAKEUP_BATCHED)
		s->policy.max_delay_ns = p->debug_batch_ns;
	if (p->perf_cpu_bytes) {
		err = loop_timer_new(l, stream_on_timer, s, &s->flush);
		if (!err)
			err = stream_open_perf(s, p);
		if (!err && p->debug_poll_ns)
			err = loop_timer_arm(s->flush, p->debug_poll_ns);
		if (err)
			goto fail;
		*out = s;
		return 0;
	}
	s->rb = ring_buffer__new(s->ring_fd, stream_on_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		goto fail;
	}
	void *cons = mmap(NULL, s->page, PROT_READ, MAP_SHARED, s->ring_fd, 0);
	if (cons == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	s->consumer_pos = cons;
	void *prod = mmap(NULL, s->page, PROT_READ, MAP_SHARED, s->ring_fd, s->page);
	if (prod == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	s->producer_pos = prod;
	err = loop_timer_new(l, stream_on_timer, s, &s->flush);
	if (err)
		goto fail;
	if (s->policy.kind == NS_WAKEUP_BATCHED && s->policy.max_delay_ns && !p->debug_poll_ns &&
	    p->bell_state) {
		void *st = mmap(NULL, s->page, PROT_READ | PROT_WRITE, MAP_SHARED,
				bpf_map__fd(p->bell_state), 0);
		if (st == MAP_FAILED) {
			err = -errno;
			goto fail;
		}
		s->bell_state = st;
		s->quiet_batches = true;
	}
	if (p->debug_poll_ns) {
		err = loop_timer_arm(s->flush, p->debug_poll_ns);
	} else {
		/* Edge-triggered: the kernel signals only when a record lands in
		 * a ring the reader had emptied, or past the batch watermark. */
		err = loop_add_fd(l, s->ring_fd, EPOLLIN | EPOLLET, stream_on_ring, s);
	}
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	stream_close(s);
	return err;
}

void stream_close(struct stream *s)
{
	if (!s)
		return;
	if (s->batch_held)
		nice_batch_closed(s->p.nice);
	if (s->rb)
		ring_buffer__free(s->rb);
	perf_ring_free(s->perf);
	perf_ring_free(s->bell);
	if (s->bell_state)
		munmap((void *)s->bell_state, s->page);
	if (s->consumer_pos)
		munmap((void *)s->consumer_pos, s->page);
	if (s->producer_pos)
		munmap((void *)s->producer_pos, s->page);
	free(s);
}

const char *stream_name(const struct stream *s)
{
	return s->p.def->name;
}

uint64_t stream_events(const struct stream *s)
{
	return s->events;
}

uint64_t stream_malformed(const struct stream *s)
{
	return s->malformed;
}

uint64_t stream_wakeups(const struct stream *s)
{
	return s->wakeups;
}

uint64_t stream_lost(const struct stream *s)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return 0;
	uint64_t vals[ncpu], sum = 0;
	uint32_t zero = 0;
	if (bpf_map_lookup_elem(s->lost_fd, &zero, vals))
		return 0;
	for (int i = 0; i < ncpu; i++)
		sum += vals[i];
	return sum;
}
