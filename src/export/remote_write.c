#include "remote_write.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encode.h"
#include "loop/loop.h"
#include "metrics/registry.h"
#include "resources/collector.h"
#include "sender.h"
#include "spool.h"
#include "util/clock.h"
#include "util/strbuf.h"
#include "version.h"
#include "util/log.h"

enum rw_drop { DROP_SPOOL_FULL, DROP_SPOOL_ERROR, DROP_REJECTED, DROP_COUNT };
static const char *const drop_reasons[DROP_COUNT] = { "spool_full", "spool_error", "rejected" };

struct remote_write {
	struct remote_write_opts o;
	char url[4096];
	char instance[160];
	struct loop_timer *tick;    /* the interval, periodic */
	struct loop_timer *backoff; /* armed only while waiting to retry */
	uint64_t backoff_ns;	    /* the next wait after a failure (0: none failed) */
	bool collecting;
	struct rw_encoder enc;
	struct spool spool;
	struct rw_sender *sender;
	struct strbuf body;	    /* the batch being sent */
	bool failing;		    /* said so on stderr; said again when it recovers */
	/* Self-metrics. */
	uint64_t samples_sent, bytes_sent, requests_failed, spool_bytes, spool_batches,
		collections;
	uint64_t rejected_batches, rejected_samples;
	struct metric *m_batches_dropped, *m_samples_dropped;
};

#define T struct remote_write
#define REASON METRIC_LABELS("reason")
static const struct metric_def rw_metrics[] = {
	{ "nodescope_remote_write_samples_sent_total",
	  "Samples the remote-write receiver accepted.", METRIC_COUNTER,
	  METRIC_VALUE(T, samples_sent) },
	{ "nodescope_remote_write_bytes_sent_total",
	  "Request bodies (protobuf, snappy-compressed) the remote-write receiver accepted, in "
	  "bytes.",
	  METRIC_COUNTER, METRIC_VALUE(T, bytes_sent) },
	{ "nodescope_remote_write_requests_failed_total",
	  "Remote-write requests that failed (no answer, 5xx, 429) and are retried with backoff; "
	  "their batches stay in the spool.",
	  METRIC_COUNTER, METRIC_VALUE(T, requests_failed) },
	{ "nodescope_remote_write_collections_total",
	  "Collections of every series written to the remote-write spool (one per interval).",
	  METRIC_COUNTER, METRIC_VALUE(T, collections) },
	{ "nodescope_remote_write_spool_bytes", "Bytes of batches in the remote-write spool.",
	  METRIC_GAUGE, METRIC_VALUE(T, spool_bytes) },
	{ "nodescope_remote_write_spool_batches",
	  "Batches (requests) in the remote-write spool, waiting to be sent.", METRIC_GAUGE,
	  METRIC_VALUE(T, spool_batches) },
	{ "nodescope_remote_write_batches_dropped_total",
	  "Remote-write batches dropped: the oldest, when the spool reached --max-spool-size "
	  "(spool_full); not written or not read back (spool_error); refused by the receiver "
	  "with a 4xx other than 429, which a retry would not change (rejected).",
	  METRIC_COUNTER, REASON, METRIC_HANDLE(T, m_batches_dropped) },
	{ "nodescope_remote_write_samples_dropped_total",
	  "Samples of the dropped remote-write batches, by the same reasons.", METRIC_COUNTER,
	  REASON, METRIC_HANDLE(T, m_samples_dropped) },
};
#undef REASON
#undef T

const char *remote_write_url(const char *metrics_endpoint, const char *collector_endpoint,
			     char *out, size_t size)
{
	int n;
	if (metrics_endpoint && *metrics_endpoint)
		n = snprintf(out, size, "%s", metrics_endpoint);
	else if (collector_endpoint && *collector_endpoint) {
		size_t len = strlen(collector_endpoint);
		while (len && collector_endpoint[len - 1] == '/')
			len--;
		n = snprintf(out, size, "%.*s/v1/metrics", (int)len, collector_endpoint);
	} else
		return NULL;
	return n >= 0 && (size_t)n < size ? out : NULL;
}

void remote_write_instance(const char *machine_id, const char *system_uuid, char *out,
			   size_t size)
{
	char uuid[256];
	size_t n = 0;
	for (const char *p = system_uuid ? system_uuid : ""; *p && n + 1 < sizeof(uuid); p++)
		if (*p != '-')
			uuid[n++] = *p;
	uuid[n] = '\0';
	machine_id = machine_id ? machine_id : "";
	if (!n || !strcmp(uuid, machine_id)) {
		snprintf(out, size, "%s", machine_id);
		return;
	}
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned md_len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_md5(), NULL) ||
	    !EVP_DigestUpdate(ctx, machine_id, strlen(machine_id)) ||
	    !EVP_DigestUpdate(ctx, uuid, n) || !EVP_DigestFinal_ex(ctx, md, &md_len)) {
		md_len = 0; /* no MD5 here (a FIPS-only libcrypto): the machine id, still unique */
	}
	EVP_MD_CTX_free(ctx);
	if (!md_len) {
		snprintf(out, size, "%s", machine_id);
		return;
	}
	size_t w = 0;
	for (unsigned i = 0; i < md_len && w + 3 <= size; i++)
		w += (size_t)snprintf(out + w, size - w, "%02x", md[i]);
}

static void rw_collect_metrics(void *ctx)
{
	struct remote_write *rw = ctx;
	const struct spool *sp = &rw->spool;
	uint64_t batches[DROP_COUNT] = { sp->dropped_batches[SPOOL_DROP_FULL],
					 sp->dropped_batches[SPOOL_DROP_ERROR],
					 rw->rejected_batches };
	uint64_t samples[DROP_COUNT] = { sp->dropped_samples[SPOOL_DROP_FULL],
					 sp->dropped_samples[SPOOL_DROP_ERROR],
					 rw->rejected_samples };

	rw->spool_bytes = sp->bytes;
	rw->spool_batches = sp->n;
	for (int i = 0; i < DROP_COUNT; i++) {
		const char *reason = drop_reasons[i];
		metric_set(rw->m_batches_dropped, &reason, (double)batches[i]);
		metric_set(rw->m_samples_dropped, &reason, (double)samples[i]);
	}
}

static void rw_kick(struct remote_write *rw);

static void rw_on_done(void *ctx, long status, const char *err)
{
	struct remote_write *rw = ctx;
	const struct spool_entry *e = spool_oldest(&rw->spool);
	unsigned samples = e ? e->samples : 0;

	if (status >= 200 && status < 300) {
		rw->samples_sent += samples;
		rw->bytes_sent += rw->body.len;
		rw->backoff_ns = 0;
		if (rw->failing)
			log_info("remote write: %s accepts again; sending the spool", rw->url);
		rw->failing = false;
		spool_pop(&rw->spool);
	} else if (status >= 400 && status < 500 && status != 429) {
		/* The receiver will never take this batch (bad data, too large): next one. */
		log_warn("remote write: %s refused a batch of %u samples with HTTP %ld; dropped",
			 rw->url, samples, status);
		rw->rejected_batches++;
		rw->rejected_samples += samples;
		spool_pop(&rw->spool);
	} else {
		rw->requests_failed++;
		rw->spool.busy = false;
		uint64_t min = (uint64_t)RW_BACKOFF_MIN_S * 1000000000ull;
		uint64_t max = (uint64_t)RW_BACKOFF_MAX_S * 1000000000ull;
		uint64_t interval = (uint64_t)rw->o.interval_ms * 1000000ull;
		if (interval < min)
			min = interval; /* no longer than a collection apart */
		rw->backoff_ns = rw->backoff_ns ? rw->backoff_ns * 2 : min;
		if (rw->backoff_ns > max)
			rw->backoff_ns = max;
		if (!rw->failing)
			log_warn("remote write: %s: %s%.0ld; batches stay in the spool and are "
				 "retried (every %llu s at most)",
				 rw->url, err ? err : "HTTP ", err ? 0 : status,
				 (unsigned long long)RW_BACKOFF_MAX_S);
		rw->failing = true;
		loop_timer_arm(rw->backoff, rw->backoff_ns);
		return;
	}
	rw_kick(rw);
}

/* Sends the oldest batch unless one is under way or a retry is waiting. */
static void rw_kick(struct remote_write *rw)
{
	while (!rw_sender_busy(rw->sender) && !loop_timer_armed(rw->backoff)) {
		const struct spool_entry *e = spool_oldest(&rw->spool);
		if (!e)
			break;
		if (spool_read_oldest(&rw->spool, &rw->body))
			continue; /* counted and removed */
		rw->spool.busy = true;
		if (rw_sender_post(rw->sender, rw->body.buf, rw->body.len)) {
			rw->spool.busy = false;
			rw_on_done(rw, 0, "cannot start a request");
		}
		break;
	}
}

static void rw_on_backoff(void *ctx)
{
	rw_kick(ctx);
}

static int rw_spool_batch(void *ctx, const void *data, size_t len, unsigned samples)
{
	struct remote_write *rw = ctx;
	int err = spool_push(&rw->spool, data, len, samples);
	if (err && err != -ENOSPC)
		log_warn("remote write: cannot write to the spool %s: %s; batch dropped",
			 rw->spool.dir, strerror(-err));
	return 0; /* counted by the spool; the next batch may fit: go on */
}

/* Every series, now, into the spool; then sending resumes. */
static void rw_collected(void *ctx)
{
	struct remote_write *rw = ctx;
	struct timespec now;
	struct metric_visitor v;

	rw->collecting = false;
	clock_gettime(CLOCK_REALTIME, &now);
	rw_encoder_begin(&rw->enc, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
	/* As Coroot's agent: up = 1 with job and instance only. */
	struct metric_sample up = { .name = "up", .suffix = "", .value = 1 };
	rw_encoder_family(&rw->enc, "up", "Whether the agent is up.", METRIC_GAUGE);
	rw_encoder_sample(&rw->enc, &up);
	rw_encoder_visitor(&rw->enc, &v);
	rw->collections++;
	metric_registry_visit_at(rw->o.registry, clock_mono_ns(), &v);
	int err = rw_encoder_end(&rw->enc);
	if (err)
		log_error("remote write: cannot encode: %s", strerror(-err));
	rw_kick(rw);
}

static void rw_on_tick(void *ctx)
{
	struct remote_write *rw = ctx;

	if (rw->collecting)
		return; /* the last one still reads containers: this one is that one */
	rw->collecting = true;
	if (!rw->o.resources || resources_scrape_begin(rw->o.resources, rw_collected, rw))
		rw_collected(rw);
}

int remote_write_new(const struct remote_write_opts *o, struct remote_write **out)
{
	struct remote_write *rw = calloc(1, sizeof(*rw));
	if (!rw)
		return -ENOMEM;
	rw->o = *o;
	snprintf(rw->url, sizeof(rw->url), "%s", o->url);
	remote_write_instance(o->machine_id, o->system_uuid, rw->instance, sizeof(rw->instance));
	struct rw_encoder_opts eo = {
		.max_series = o->max_series,
		.job = RW_JOB,
		.instance = rw->instance,
		.batch = rw_spool_batch,
		.batch_ctx = rw,
	};
	rw_encoder_init(&rw->enc, &eo);
	char ua[64];
	snprintf(ua, sizeof(ua), "nodescope/%s", nodescope_version);
	struct rw_sender_opts so = {
		.loop = o->loop,
		.url = o->url,
		.api_key = o->api_key,
		.ca_file = o->ca_file,
		.insecure = o->insecure,
		.timeout_s = RW_TIMEOUT_S,
		.user_agent = ua,
		.done = rw_on_done,
		.ctx = rw,
	};
	int err = spool_open(&rw->spool, o->spool_dir, o->spool_max_bytes);
	if (err) {
		log_error("remote write: cannot use the spool directory %s: %s", o->spool_dir,
			  strerror(-err));
		remote_write_free(rw);
		return err;
	}
	if ((err = rw_sender_new(&so, &rw->sender)) ||
	    (err = loop_timer_new(o->loop, rw_on_tick, rw, &rw->tick)) ||
	    (err = loop_timer_new(o->loop, rw_on_backoff, rw, &rw->backoff)) ||
	    /* Periodic; the first collection one interval after start, when the streams filled. */
	    (err = loop_timer_arm_every(rw->tick, (uint64_t)o->interval_ms * 1000000ull)) ||
	    /* Last: the registry keeps pointers into rw from here on. */
	    (err = metric_register_defs(o->registry, rw_metrics, METRIC_DEFS_COUNT(rw_metrics), rw,
					0))) {
		log_error("remote write: cannot start: %s", strerror(-err));
		remote_write_free(rw);
		return err;
	}
	metric_registry_add_collector(o->registry, rw_collect_metrics, rw);
	if (rw->spool.n)
		log_info("remote write: %zu batches from an earlier run in %s", rw->spool.n,
			 o->spool_dir);
	rw_kick(rw);
	*out = rw;
	return 0;
}

void remote_write_free(struct remote_write *rw)
{
	if (!rw)
		return;
	rw_sender_free(rw->sender);
	spool_close(&rw->spool);
	rw_encoder_free(&rw->enc);
	strbuf_free(&rw->body);
	free(rw);
}
