/*
 * What each cloud provider's instance metadata service is asked and how its
 * answers become node_cloud_info's labels, as Coroot's agent reads them
 * (its node/metadata/): one row of requests per provider, asked in order by
 * the fetcher (node/cloud_fetch.c), each answer parsed here. Pure: no I/O,
 * so the parsers are unit tested and fuzzed on their own.
 */
#ifndef NODESCOPE_NODE_CLOUD_META_H
#define NODESCOPE_NODE_CLOUD_META_H

#include <stdbool.h>
#include <stddef.h>

#include "node/cloud.h"

/* How an answer's body is read. */
enum cloud_body {
	CLOUD_TEXT, /* the body is the value */
	CLOUD_JSON, /* fields are dotted paths into a JSON object ("a.0.b"; keys as Go matches them) */
	CLOUD_YAML, /* fields are top-level "key: value" lines (Hetzner) */
	CLOUD_KV,   /* fields are "KEY=VALUE" lines, the last one winning (Scaleway) */
};

/* What is done to a value before it is kept. */
enum cloud_xform {
	CLOUD_AS_IS,
	CLOUD_AFTER_3RD_SLASH, /* GCP's "projects/N/zones/Z": Z ("" when not that shape) */
	CLOUD_PREEMPTIBLE,     /* GCP: "true" -> "preemptible", "false" -> "on-demand" */
};

/* The label a value goes to; CLOUD_TOKEN: the token later requests send. */
#define CLOUD_TOKEN NODE_CLOUD_LABELS
#define CLOUD_MAX_FIELDS 7

struct cloud_field {
	int label;	 /* enum node_cloud_label, or CLOUD_TOKEN */
	const char *key; /* NULL for CLOUD_TEXT */
	enum cloud_xform xform;
};

struct cloud_request {
	const char *method; /* NULL: GET */
	const char *path;   /* after the provider's base */
	const char *header; /* one fixed header of this request, or NULL */
	enum cloud_body body;
	bool optional; /* a status other than 200 or a bad body leaves its labels "" */
	bool nonempty; /* an empty value is no answer (GCP's project) */
	struct cloud_field fields[CLOUD_MAX_FIELDS];
};

/* Labels made from others once every answer is in. */
enum cloud_derive {
	CLOUD_DERIVE_NONE,
	CLOUD_REGION_BEFORE_LAST_DASH, /* GCP: us-central1-a -> us-central1 */
	CLOUD_REGION_WITHOUT_NUMBER,   /* Scaleway, IBM: fr-par-1 -> fr-par ("-<digits>" cut) */
	CLOUD_ZONE_IS_REGION,	       /* DigitalOcean */
	CLOUD_ZONE_FROM_AD,	       /* Oracle: "xyz:EU-FRANKFURT-1-AD-2" -> <region>-ad-2 */
};

#define CLOUD_MAX_REQUESTS 11

struct cloud_provider {
	const char *name;	   /* as DMI detection names it (node_cloud_provider) */
	const char *bases[2];	   /* URL prefixes, the second tried when the first's token fails */
	const char *header;	   /* sent with every request, or NULL */
	const char *token_header;  /* a printf format for the token, or NULL */
	enum cloud_derive derive;
	struct cloud_request requests[CLOUD_MAX_REQUESTS]; /* up to the first without a path */
};

/* The row of a provider name ("AWS", ...), or NULL: nothing to ask. */
const struct cloud_provider *cloud_provider_find(const char *name);

#define CLOUD_TOKEN_MAX 4096

/* Where a fetch's answers are gathered. */
struct cloud_answers {
	struct node_cloud cloud;
	char token[CLOUD_TOKEN_MAX];
};

/*
 * Parses one answer of rq into a: 0, or -EINVAL when the body is not what rq
 * expects (not JSON, a value that is not a string, control characters, a
 * value too long for a label). A missing key leaves its label "".
 */
int cloud_parse(const struct cloud_request *rq, const char *body, size_t len,
		struct cloud_answers *a);

/* The provider's derived labels, once every answer is parsed. */
void cloud_derive(const struct cloud_provider *p, struct node_cloud *c);

#endif
