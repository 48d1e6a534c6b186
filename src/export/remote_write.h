/*
 * Prometheus remote write (protocol 1.0), as the Coroot node agent pushes
 * to its server or to any Prometheus-compatible receiver: every interval
 * the registry is collected (the same sliced collection and walk as a
 * /metrics scrape), encoded (encode.h) with job and instance labels and an
 * `up` series, written to the disk spool (spool.h), and the spool is sent
 * oldest first (sender.h), with retries and backoff while the receiver
 * fails. Exists only when a URL is configured: its interval timer is then
 * the agent's one periodic timer.
 */
#ifndef NODESCOPE_EXPORT_REMOTE_WRITE_H
#define NODESCOPE_EXPORT_REMOTE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct loop;
struct metric_registry;
struct resources;
struct remote_write;

#define RW_JOB "coroot-node-agent" /* Coroot's: its server's queries may name it */
#define RW_TIMEOUT_S 30		    /* a request's whole time, as Coroot's */
#define RW_BACKOFF_MIN_S 5	    /* the first retry, then doubling up to ... */
#define RW_BACKOFF_MAX_S 60

struct remote_write_opts {
	struct metric_registry *registry;
	struct loop *loop;
	struct resources *resources; /* sliced collection before each walk (NULL: none) */
	const char *url;
	const char *api_key;
	const char *ca_file;
	bool insecure;
	unsigned interval_ms;	     /* a collection each (Coroot's --scrape-interval) */
	const char *spool_dir;
	uint64_t spool_max_bytes;
	unsigned max_series;	     /* samples per request */
	const char *machine_id;	     /* the node's identity, for the instance label */
	const char *system_uuid;
};

/* Returns 0, or -errno after saying what failed on stderr. */
int remote_write_new(const struct remote_write_opts *o, struct remote_write **out);
void remote_write_free(struct remote_write *rw);

/*
 * The endpoint: metrics_endpoint, else collector_endpoint + "/v1/metrics"
 * (Coroot's rule), else NULL (remote write off). Returns out or NULL.
 */
const char *remote_write_url(const char *metrics_endpoint, const char *collector_endpoint,
			     char *out, size_t size);
/*
 * Coroot's instance label: machine_id, or, when the system UUID (without
 * dashes) is known and differs, the hex MD5 of machine_id followed by it.
 */
void remote_write_instance(const char *machine_id, const char *system_uuid, char *out,
			   size_t size);

#endif
