#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "loop/loop.h"
#include "tcp/addr.h"
#include "tcp/event.h"
#include "util/clock.h"


#define TRACE_BACKLOG_MAX (8u << 20)
#define TRACE_FLUSH_BYTES (64u << 10) /* written at once past this, not at the iteration's end */

static void trace_flush(struct trace *t);

static bool trace_flush_work(void *ctx)
{
	struct trace *t = ctx;
	if (!t->waiting_out)
		trace_flush(t);
	return false;
}

void trace_init(struct trace *t, int fd, struct loop *loop)
{
	struct stat st;

	*t = (struct trace){ .loop = loop, .fd = fd, .line = STRBUF_INIT, .backlog = STRBUF_INIT,
			     .flusher = -1 };
	if (fd >= 0 && loop && loop_add_worker(loop, trace_flush_work, t, &t->flusher))
		t->flusher = -1; /* then each line is written as it comes */
	t->mono_to_real_ns = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_mono_ns());
	/* Terminals and files keep blocking writes (they don't stall for long). */
	if (fd >= 0 && loop && fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		t->saved_flags = fcntl(fd, F_GETFL);
		if (t->saved_flags >= 0 && fcntl(fd, F_SETFL, t->saved_flags | O_NONBLOCK) == 0)
			t->nonblock = true;
	}
}

static void trace_on_writable(void *ctx, uint32_t events);

/* Writes what the backlog holds; waits for EPOLLOUT while something is left. */
static void trace_flush(struct trace *t)
{
	while (t->backlog_off < t->backlog.len && !t->broken) {
		ssize_t n = write(t->fd, t->backlog.buf + t->backlog_off,
				  t->backlog.len - t->backlog_off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0) {
			t->broken = true; /* EPIPE: nobody reads any more */
			if (t->loop)
				loop_stop(t->loop);
			break;
		}
		t->backlog_off += (size_t)n;
	}
	bool empty = t->backlog_off >= t->backlog.len;
	if (empty) {
		strbuf_reset(&t->backlog);
		t->backlog_off = 0;
	}
	if (empty && t->waiting_out) {
		loop_del_fd(t->loop, t->fd);
		t->waiting_out = false;
	} else if (!empty && !t->waiting_out && !t->broken) {
		t->waiting_out = loop_add_fd(t->loop, t->fd, EPOLLOUT, trace_on_writable, t) == 0;
	}
}

static void trace_on_writable(void *ctx, uint32_t events)
{
	trace_flush(ctx);
}

void trace_free(struct trace *t)
{
	if (t->fd >= 0 && !t->nonblock)
		trace_flush(t); /* lines of the last iteration */
	if (t->nonblock) {
		trace_flush(t); /* one last try, without waiting */
		if (t->waiting_out)
			loop_del_fd(t->loop, t->fd);
		fcntl(t->fd, F_SETFL, t->saved_flags);
	}
	strbuf_free(&t->line);
	strbuf_free(&t->backlog);
}

/*
 * Every line goes through the backlog: on a blocking fd trace_flush writes it
 * all at once; on a pipe or socket what doesn't fit waits for EPOLLOUT.
 */
static void trace_write(struct trace *t)
{
	if (t->backlog.len - t->backlog_off + t->line.len > TRACE_BACKLOG_MAX) {
		t->dropped++;
	} else {
		if (t->backlog_off > TRACE_BACKLOG_MAX / 2) {
			/* Keep the backlog compact: drop what was written already. */
			size_t rest = t->backlog.len - t->backlog_off;
			memmove(t->backlog.buf, t->backlog.buf + t->backlog_off, rest);
			t->backlog.len = rest;
			t->backlog_off = 0;
		}
		strbuf_append(&t->backlog, t->line.buf, t->line.len);
		t->lines++;
		if (t->waiting_out)
			; /* EPOLLOUT will write it */
		else if (t->flusher >= 0 && t->backlog.len - t->backlog_off < TRACE_FLUSH_BYTES)
			loop_work_pending(t->loop, t->flusher);
		else
			trace_flush(t);
	}
	strbuf_reset(&t->line);
}

void trace_ready(struct trace *t)
{
	if (!trace_on(t))
		return;
	json_begin(&t->line, "ready");
	json_end(&t->line);
	trace_write(t);
	if (!t->waiting_out)
		trace_flush(t); /* readers wait for it before the loop runs */
}

/* ,"ts":<Unix ns> from a CLOCK_MONOTONIC stamp. */
static void json_key_ts(struct strbuf *sb, uint64_t mono_ns, int64_t mono_to_real_ns)
{
	json_key_u64(sb, "ts", (uint64_t)((int64_t)mono_ns + mono_to_real_ns));
}

void trace_format_proc(struct strbuf *sb, const struct proc_event *e, const char *container,
		       int64_t mono_to_real_ns)
{
	json_begin(sb, proc_event_type_name(e->type));
	json_key_ts(sb, e->ts_ns, mono_to_real_ns);
	json_key_u64(sb, "pid", e->pid);
	switch (e->type) {
	case NS_PROC_EXEC:
		json_key_u64(sb, "ppid", e->ppid);
		json_key_u64(sb, "uid", e->uid);
		json_key_str(sb, "comm", e->comm);
		json_key_str(sb, "exe", e->exe);
		json_key_str(sb, "args", e->args);
		json_key_u64(sb, "cgroup_id", e->cgroups.v2);
		break;
	case NS_PROC_EXIT:
		json_key_str(sb, "comm", e->comm);
		json_key_u64(sb, "code", e->exit_code);
		json_key_u64(sb, "signal", e->signal);
		json_key_u64(sb, "duration_ns", e->duration_ns);
		break;
	case NS_PROC_FORK:
		json_key_u64(sb, "ppid", e->ppid);
		json_key_str(sb, "comm", e->comm);
		break;
	case NS_PROC_OOM_KILL:
		json_key_u64(sb, "trigger_pid", e->trigger_pid);
		break;
	}
	if (container)
		json_key_str(sb, "container", container);
	json_end(sb);
}

void trace_proc(struct trace *t, const struct proc_event *e, const char *container)
{
	if (t && t->tap && t->tap->proc)
		t->tap->proc(t->tap->ctx, e, container);
	if (!trace_on(t))
		return;
	trace_format_proc(&t->line, e, container, t->mono_to_real_ns);
	trace_write(t);
}

void trace_first_exec(struct trace *t, uint64_t ts_ns, uint32_t pid, uint64_t cgroup_id,
		      const char *container)
{
	if (!trace_on(t))
		return;
	json_begin(&t->line, "first_exec");
	json_key_ts(&t->line, ts_ns, t->mono_to_real_ns);
	json_key_u64(&t->line, "pid", pid);
	json_key_u64(&t->line, "cgroup_id", cgroup_id);
	if (container)
		json_key_str(&t->line, "container", container);
	json_end(&t->line);
	trace_write(t);
}

void trace_format_tcp(struct strbuf *sb, const struct ns_tcp_event *e, uint32_t pid,
		      const char *container, int64_t mono_to_real_ns)
{
	char local[TCP_ADDR_STRLEN], remote[TCP_ADDR_STRLEN];
	bool inbound = e->flags & NS_TCP_F_INBOUND;

	tcp_addr_format(e->family, e->saddr, e->sport, local, sizeof(local));
	tcp_addr_format(e->family, e->daddr, e->dport, remote, sizeof(remote));
	json_begin(sb, tcp_event_type_name(e->type));
	json_key_ts(sb, e->ts_ns, mono_to_real_ns);
	json_key_u64(sb, "pid", pid);
	json_key_i64(sb, "fd", e->fd);
	switch (e->type) {
	case NS_TCP_LISTEN:
	case NS_TCP_LISTEN_CLOSE:
		json_key_str(sb, "addr", local);
		break;
	case NS_TCP_CONNECT_ERROR:
		json_key_str(sb, "dst", remote);
		json_key_str(sb, "error", tcp_error_name(e->err));
		json_key_i64(sb, "errno", e->err);
		json_key_u64(sb, "duration_ns", e->duration_ns);
		break;
	default:
		json_key_str(sb, "src", inbound ? remote : local);
		json_key_str(sb, "dst", inbound ? local : remote);
		json_key_str(sb, "dir", inbound ? "in" : "out");
		if (e->type == NS_TCP_CONNECT)
			json_key_u64(sb, "duration_ns", e->duration_ns);
		if (e->type == NS_TCP_RETRANSMIT)
			json_key_u64(sb, "segments", e->segs);
		if (e->type == NS_TCP_CLOSE) {
			json_key_u64(sb, "bytes_sent", e->bytes_sent);
			json_key_u64(sb, "bytes_received", e->bytes_received);
			json_key_u64(sb, "duration_ns", e->duration_ns);
		}
	}
	if (container)
		json_key_str(sb, "container", container);
	json_end(sb);
}

void trace_tcp(struct trace *t, const struct ns_tcp_event *e, uint32_t pid, const char *container)
{
	if (!trace_on(t))
		return;
	trace_format_tcp(&t->line, e, pid, container, t->mono_to_real_ns);
	trace_write(t);
}

void trace_format_l7(struct strbuf *sb, const struct trace_l7 *r, int64_t mono_to_real_ns)
{
	json_begin(sb, "l7");
	json_key_ts(sb, r->ts_ns, mono_to_real_ns);
	json_key_str(sb, "proto", r->proto);
	json_key_u64(sb, "pid", r->pid);
	json_key_str(sb, "dir", r->inbound ? "in" : "out");
	if (r->method) {
		json_key_str(sb, "method", r->method);
		json_key_str(sb, "path", r->path);
		json_key_i64(sb, "status", r->status);
	} else {
		json_key_str(sb, "op", r->op ? r->op : "");
		json_key_str(sb, "statement", r->statement ? r->statement : "");
		json_key_str(sb, "status", r->status_name ? r->status_name : "unknown");
		if (r->error_code && r->error_code[0])
			json_key_str(sb, "error_code", r->error_code);
		if (r->skipped)
			json_key_bool(sb, "skipped", true);
	}
	json_key_u64(sb, "duration_ns", r->duration_ns);
	json_key_bool(sb, "tls", r->tls);
	json_key_str(sb, "src", r->src);
	json_key_str(sb, "dst", r->dst);
	if (r->container)
		json_key_str(sb, "container", r->container);
	json_end(sb);
}

void trace_l7(struct trace *t, const struct trace_l7 *r)
{
	if (t && t->tap && t->tap->l7)
		t->tap->l7(t->tap->ctx, r);
	if (!trace_on(t))
		return;
	trace_format_l7(&t->line, r, t->mono_to_real_ns);
	trace_write(t);
}

void trace_format_tls_probe(struct strbuf *sb, const struct trace_tls_probe *r,
			    int64_t mono_to_real_ns)
{
	json_begin(sb, "tls_probe");
	json_key_ts(sb, r->ts_ns, mono_to_real_ns);
	json_key_u64(sb, "pid", r->pid);
	json_key_str(sb, "file", r->file);
	json_key_str(sb, "library", r->library);
	if (r->version)
		json_key_str(sb, "version", r->version);
	json_key_u64(sb, "functions", r->functions);
	json_key_u64(sb, "probes", r->probes);
	if (r->error)
		json_key_str(sb, "error", r->error);
	if (r->since_ns) {
		json_key_u64(sb, "since_ns", r->since_ns);
		json_key_u64(sb, "wait_ns", r->wait_ns);
		json_key_u64(sb, "open_ns", r->open_ns);
		json_key_u64(sb, "plan_ns", r->plan_ns);
		json_key_u64(sb, "attach_ns", r->attach_ns);
	}
	json_end(sb);
}

void trace_tls_probe(struct trace *t, const struct trace_tls_probe *r)
{
	if (!trace_on(t))
		return;
	trace_format_tls_probe(&t->line, r, t->mono_to_real_ns);
	trace_write(t);
}

void trace_tls_release(struct trace *t, uint64_t ts_ns, const char *file, unsigned probes)
{
	if (!trace_on(t))
		return;
	json_begin(&t->line, "tls_release");
	json_key_ts(&t->line, ts_ns, t->mono_to_real_ns);
	json_key_str(&t->line, "file", file ? file : "");
	json_key_u64(&t->line, "probes", probes);
	json_end(&t->line);
	trace_write(t);
}
