#include "cloud_meta.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define AWS_MD(p, l) { .path = "/meta-data/" p, .optional = true, .fields = { { l } } }
#define GCP_MD(p, l, x) { .path = p, .optional = true, .fields = { { l, NULL, x } } }
#define GET(p, l) { .path = p, .fields = { { l } } }

/* Coroot's node/metadata/<provider>.go: URLs, headers, and where each label comes from. */
static const struct cloud_provider providers[] = {
	{ "AWS", { "http://169.254.169.254/latest" }, NULL, "X-aws-ec2-metadata-token: %s",
	  CLOUD_DERIVE_NONE, {
		{ .method = "PUT", .path = "/api/token",
		  .header = "X-aws-ec2-metadata-token-ttl-seconds: 21600",
		  .fields = { { CLOUD_TOKEN } } },
		AWS_MD("instance-id", NODE_CLOUD_INSTANCE_ID),
		AWS_MD("instance-life-cycle", NODE_CLOUD_INSTANCE_LIFE_CYCLE),
		AWS_MD("instance-type", NODE_CLOUD_INSTANCE_TYPE),
		AWS_MD("placement/region", NODE_CLOUD_REGION),
		AWS_MD("placement/availability-zone", NODE_CLOUD_AVAILABILITY_ZONE),
		AWS_MD("placement/availability-zone-id", NODE_CLOUD_AVAILABILITY_ZONE_ID),
		AWS_MD("local-ipv4", NODE_CLOUD_LOCAL_IPV4),
		AWS_MD("public-ipv4", NODE_CLOUD_PUBLIC_IPV4),
		{ .path = "/meta-data/identity-credentials/ec2/info", .body = CLOUD_JSON,
		  .optional = true, .fields = { { NODE_CLOUD_ACCOUNT_ID, "AccountId" } } },
	} },
	{ "GCP", { "http://169.254.169.254/computeMetadata/v1/" }, "Metadata-Flavor: Google", NULL,
	  CLOUD_REGION_BEFORE_LAST_DASH, {
		/* Without the project there is no answer at all. */
		{ .path = "project/project-id", .nonempty = true,
		  .fields = { { NODE_CLOUD_ACCOUNT_ID } } },
		GCP_MD("instance/id", NODE_CLOUD_INSTANCE_ID, CLOUD_AS_IS),
		GCP_MD("instance/network-interfaces/0/ip", NODE_CLOUD_LOCAL_IPV4, CLOUD_AS_IS),
		GCP_MD("instance/network-interfaces/0/access-configs/0/external-ip",
		       NODE_CLOUD_PUBLIC_IPV4, CLOUD_AS_IS),
		GCP_MD("instance/scheduling/preemptible", NODE_CLOUD_INSTANCE_LIFE_CYCLE,
		       CLOUD_PREEMPTIBLE),
		GCP_MD("instance/machine-type", NODE_CLOUD_INSTANCE_TYPE, CLOUD_AFTER_3RD_SLASH),
		GCP_MD("instance/zone", NODE_CLOUD_AVAILABILITY_ZONE, CLOUD_AFTER_3RD_SLASH),
	} },
	{ "Azure", { "http://169.254.169.254/metadata/instance" }, "Metadata: True", NULL,
	  CLOUD_DERIVE_NONE, {
		{ .path = "?api-version=2021-05-01&format=json", .body = CLOUD_JSON, .fields = {
			{ NODE_CLOUD_ACCOUNT_ID, "compute.subscriptionId" },
			{ NODE_CLOUD_INSTANCE_ID, "compute.vmID" },
			{ NODE_CLOUD_INSTANCE_TYPE, "compute.vmSize" },
			{ NODE_CLOUD_REGION, "compute.location" },
			{ NODE_CLOUD_AVAILABILITY_ZONE, "compute.zone" },
			{ NODE_CLOUD_LOCAL_IPV4, "network.interface.0.ipv4.ipAddress.0.privateIpAddress" },
			{ NODE_CLOUD_PUBLIC_IPV4, "network.interface.0.ipv4.ipAddress.0.publicIpAddress" },
		} },
	} },
	{ "Hetzner", { "http://169.254.169.254/hetzner/v1/metadata" }, NULL, NULL,
	  CLOUD_DERIVE_NONE, {
		{ .path = "", .body = CLOUD_YAML, .fields = {
			{ NODE_CLOUD_AVAILABILITY_ZONE, "availability-zone" },
			{ NODE_CLOUD_INSTANCE_ID, "instance-id" },
			{ NODE_CLOUD_PUBLIC_IPV4, "public-ipv4" },
			{ NODE_CLOUD_LOCAL_IPV4, "local-ipv4" },
			{ NODE_CLOUD_REGION, "region" },
		} },
	} },
	{ "DigitalOcean", { "http://169.254.169.254/metadata/v1/" }, NULL, NULL,
	  CLOUD_ZONE_IS_REGION, {
		GET("id", NODE_CLOUD_INSTANCE_ID),
		GET("region", NODE_CLOUD_REGION),
	} },
	{ "Alibaba", { "http://100.100.100.200/latest/meta-data/" }, NULL, NULL,
	  CLOUD_DERIVE_NONE, {
		GET("instance-id", NODE_CLOUD_INSTANCE_ID),
		GET("region-id", NODE_CLOUD_REGION),
		GET("zone-id", NODE_CLOUD_AVAILABILITY_ZONE),
		GET("owner-account-id", NODE_CLOUD_ACCOUNT_ID),
		GET("instance/instance-type", NODE_CLOUD_INSTANCE_TYPE),
		GET("private-ipv4", NODE_CLOUD_LOCAL_IPV4),
	} },
	{ "Scaleway", { "http://169.254.42.42/conf" }, NULL, NULL, CLOUD_REGION_WITHOUT_NUMBER, {
		{ .path = "", .body = CLOUD_KV, .fields = {
			{ NODE_CLOUD_INSTANCE_ID, "ID" },
			{ NODE_CLOUD_AVAILABILITY_ZONE, "ZONE" },
			{ NODE_CLOUD_INSTANCE_TYPE, "COMMERCIAL_TYPE" },
		} },
	} },
	{ "Oracle", { "http://169.254.169.254/opc/v2/instance/" }, "Authorization: Bearer Oracle",
	  NULL, CLOUD_ZONE_FROM_AD, {
		{ .path = "", .body = CLOUD_JSON, .fields = {
			{ NODE_CLOUD_INSTANCE_ID, "id" },
			{ NODE_CLOUD_REGION, "canonicalRegionName" },
			{ NODE_CLOUD_AVAILABILITY_ZONE, "availabilityDomain" },
			{ NODE_CLOUD_INSTANCE_TYPE, "shape" },
		} },
	} },
	{ "IBM", { "http://api.metadata.cloud.ibm.com", "https://api.metadata.cloud.ibm.com" }, NULL,
	  "Authorization: Bearer %s", CLOUD_REGION_WITHOUT_NUMBER, {
		{ .method = "PUT", .path = "/instance_identity/v1/token?version=2025-04-22",
		  .header = "Metadata-Flavor: ibm", .body = CLOUD_JSON,
		  .fields = { { CLOUD_TOKEN, "access_token" } } },
		{ .path = "/metadata/v1/instance?version=2025-04-22", .body = CLOUD_JSON, .fields = {
			{ NODE_CLOUD_INSTANCE_ID, "id" },
			{ NODE_CLOUD_INSTANCE_TYPE, "profile.name" },
			{ NODE_CLOUD_AVAILABILITY_ZONE, "zone.name" },
		} },
	} },
};
#undef GET
#undef GCP_MD
#undef AWS_MD

const struct cloud_provider *cloud_provider_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(providers) / sizeof(providers[0]); i++)
		if (!strcmp(providers[i].name, name))
			return &providers[i];
	return NULL;
}

/* ---- values ---- */

/* A value kept as a label (or sent back as a token): printable ASCII that fits. */
static int keep(struct cloud_answers *a, const struct cloud_field *f, const char *v, size_t len)
{
	char *out = f->label == CLOUD_TOKEN ? a->token : a->cloud.v[f->label];
	size_t cap = f->label == CLOUD_TOKEN ? sizeof(a->token) : sizeof(a->cloud.v[0]);

	if (len >= cap)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return -EINVAL;
	if (f->xform == CLOUD_AFTER_3RD_SLASH) {
		size_t skip = 0;
		for (int slashes = 0; slashes < 3; slashes++) {
			const char *s = memchr(v + skip, '/', len - skip);
			if (!s) {
				len = skip = 0;
				break;
			}
			skip = (size_t)(s - v) + 1;
		}
		v += skip;
		len -= skip;
	} else if (f->xform == CLOUD_PREEMPTIBLE) {
		const char *lc = len == 4 && !strncasecmp(v, "true", 4)	   ? "preemptible"
				 : len == 5 && !strncasecmp(v, "false", 5) ? "on-demand"
									   : "";
		v = lc;
		len = strlen(lc);
	}
	memcpy(out, v, len);
	out[len] = '\0';
	return 0;
}

/* ---- JSON: keys as Go's encoding/json matches them (exact, else case-insensitive) ---- */

static json_t *object_get(json_t *o, const char *key, size_t len)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
		if (strlen(k) == len && !strncmp(k, key, len))
			return v;
	json_object_foreach(o, k, v)
		if (strlen(k) == len && !strncasecmp(k, key, len))
			return v;
	return NULL;
}

/* The value at a dotted path: 0 with *out NULL when absent, -EINVAL on a type Go would refuse. */
static int json_path(json_t *root, const char *path, json_t **out)
{
	json_t *cur = root;

	while (cur && !json_is_null(cur)) {
		size_t len = strcspn(path, ".");
		if (json_is_object(cur)) {
			cur = object_get(cur, path, len);
		} else if (json_is_array(cur) && len && strspn(path, "0123456789") == len) {
			cur = json_array_get(cur, strtoul(path, NULL, 10));
		} else {
			return -EINVAL;
		}
		if (!path[len])
			break;
		path += len + 1;
	}
	*out = cur && !json_is_null(cur) ? cur : NULL;
	return 0;
}

static int parse_json(const struct cloud_request *rq, const char *body, size_t len,
		      struct cloud_answers *a)
{
	json_t *root = json_loadb(body, len, 0, NULL);
	int err = json_is_object(root) ? 0 : -EINVAL;

	for (int i = 0; !err && i < CLOUD_MAX_FIELDS && rq->fields[i].key; i++) {
		json_t *v;
		if ((err = json_path(root, rq->fields[i].key, &v)))
			break;
		if (v && !json_is_string(v))
			err = -EINVAL;
		else if (v)
			err = keep(a, &rq->fields[i], json_string_value(v), json_string_length(v));
		else
			err = keep(a, &rq->fields[i], "", 0);
	}
	json_decref(root);
	return err;
}

/* ---- lines: YAML's top-level scalars, or KEY=VALUE ---- */

static int parse_lines(const struct cloud_request *rq, const char *body, size_t len,
		       struct cloud_answers *a)
{
	char sep = rq->body == CLOUD_YAML ? ':' : '=';
	unsigned found = 0;

	for (const char *line = body, *end = body + len; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *eol = nl ? nl : end;
		const char *next = nl ? nl + 1 : end;
		if (eol > line && eol[-1] == '\r')
			eol--;
		const char *s = memchr(line, sep, (size_t)(eol - line));
		for (int i = 0; s && i < CLOUD_MAX_FIELDS && rq->fields[i].key; i++) {
			const struct cloud_field *f = &rq->fields[i];
			size_t klen = strlen(f->key);
			if ((size_t)(s - line) != klen || strncmp(line, f->key, klen))
				continue;
			const char *v = s + 1, *ve = eol;
			if (rq->body == CLOUD_YAML) {
				/* "key:value" is no mapping in YAML; a comment or blanks are no value. */
				if (v < ve && *v != ' ' && *v != '\t')
					break;
				while (v < ve && (*v == ' ' || *v == '\t'))
					v++;
				if (v < ve && *v != '\'' && *v != '"') {
					const char *c = v;
					while ((c = memchr(c, '#', (size_t)(ve - c))) && c > v &&
					       c[-1] != ' ' && c[-1] != '\t')
						c++;
					if (c)
						ve = c;
				}
				while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
					ve--;
				if (ve - v >= 2 && (*v == '\'' || *v == '"') && ve[-1] == *v) {
					v++;
					ve--;
				}
			}
			if (keep(a, f, v, (size_t)(ve - v)))
				return -EINVAL;
			found++;
			break;
		}
		line = next;
	}
	return found ? 0 : -EINVAL;
}

int cloud_parse(const struct cloud_request *rq, const char *body, size_t len,
		struct cloud_answers *a)
{
	switch (rq->body) {
	case CLOUD_TEXT:
		if (len && body[len - 1] == '\n')
			len -= len > 1 && body[len - 2] == '\r' ? 2 : 1;
		if (!len && rq->nonempty)
			return -EINVAL;
		return keep(a, &rq->fields[0], body, len);
	case CLOUD_JSON:
		return parse_json(rq, body, len, a);
	case CLOUD_YAML:
	case CLOUD_KV:
		return parse_lines(rq, body, len, a);
	}
	return -EINVAL;
}

/* The length of s without a trailing "<suffix><digits>" (Go's `<suffix>(\d+)$`), or -1. */
static long cut_numbered(const char *s, const char *suffix)
{
	size_t n = strlen(s), d = n, sl = strlen(suffix);

	while (d > 0 && isdigit((unsigned char)s[d - 1]))
		d--;
	if (d == n || d < sl || strncmp(s + d - sl, suffix, sl))
		return -1;
	return (long)(d - sl);
}

void cloud_derive(const struct cloud_provider *p, struct node_cloud *c)
{
	char *region = c->v[NODE_CLOUD_REGION], *zone = c->v[NODE_CLOUD_AVAILABILITY_ZONE];
	const size_t size = sizeof(c->v[0]);
	long cut;

	switch (p->derive) {
	case CLOUD_DERIVE_NONE:
		break;
	case CLOUD_REGION_BEFORE_LAST_DASH: {
		const char *dash = strrchr(zone, '-');
		if (dash)
			snprintf(region, size, "%.*s", (int)(dash - zone), zone);
		break;
	}
	case CLOUD_REGION_WITHOUT_NUMBER:
		cut = cut_numbered(zone, "-");
		snprintf(region, size, "%.*s", cut < 0 ? (int)strlen(zone) : (int)cut, zone);
		break;
	case CLOUD_ZONE_IS_REGION:
		snprintf(zone, size, "%s", region);
		break;
	case CLOUD_ZONE_FROM_AD: {
		char z[3 * NODE_DMI_MAX];
		cut = cut_numbered(zone, "-AD-");
		if (cut >= 0)
			snprintf(z, sizeof(z), "%s-ad-%s", region, zone + cut + 4);
		size_t len = cut >= 0 ? strlen(z) : 0;
		if (len >= size) /* no label rather than a cut one */
			len = 0;
		memcpy(zone, z, len);
		zone[len] = '\0';
		break;
	}
	}
}
