/*
 * Kafka, both directions. Every message is a 4-byte big-endian length and
 * a body. A request's body starts with its header: api key, api version,
 * correlation id, client id (a nullable int16 string) and, in the versions
 * an api made "flexible", tagged fields. A response's starts with the
 * correlation id only (and tagged fields when flexible, except ApiVersions,
 * whose response header never has them), so the parser remembers each
 * request's api key and version by correlation id to read its answer.
 * Pairing is by correlation id: clients keep several requests in flight.
 *
 * Operation: the api's name ("Produce", "Fetch"). Trace form: the name and
 * the first topic (Produce, Fetch, ListOffsets, Metadata) or group
 * (group coordination and offsets). Status: the error codes of the answers
 * that have them where the layout is simple enough to walk (a top-level
 * error, Produce's and Fetch's partitions, Metadata's first topic): failed
 * with the first non-zero code, ok when the codes read were all zero, unknown
 * for the other apis or when the body was cut before any code (an error past
 * the captured part of a long answer is not seen). Produce with acks = 0 is
 * not answered: a request without a reply.
 */
#include <stdio.h>
#include <string.h>

#include "proto.h"
#include "frames.h"

#define KF_MAX_LEN (1u << 28)	  /* framing: longer is garbage */
#define KF_DETECT_MAX (1u << 24) /* detection: a request is trusted below 16 MiB */
#define KF_INFLIGHT 256		  /* correlation ids remembered (librdkafka pipelines deep) */
#define KF_NOFLEX 0xff

struct kf_api {
	const char *name;
	uint8_t flex; /* first flexible version, KF_NOFLEX: none */
};

/* Api keys, their names and first flexible versions (the protocol's message definitions). */
static const struct kf_api apis[] = {
	{ "Produce", 9 },
	{ "Fetch", 12 },
	{ "ListOffsets", 6 },
	{ "Metadata", 9 },
	{ "LeaderAndIsr", 4 },
	{ "StopReplica", 2 },
	{ "UpdateMetadata", 6 },
	{ "ControlledShutdown", 3 },
	{ "OffsetCommit", 8 },
	{ "OffsetFetch", 6 },
	{ "FindCoordinator", 3 },
	{ "JoinGroup", 6 },
	{ "Heartbeat", 4 },
	{ "LeaveGroup", 4 },
	{ "SyncGroup", 4 },
	{ "DescribeGroups", 5 },
	{ "ListGroups", 3 },
	{ "SaslHandshake", KF_NOFLEX },
	{ "ApiVersions", 3 },
	{ "CreateTopics", 5 },
	{ "DeleteTopics", 4 },
	{ "DeleteRecords", 2 },
	{ "InitProducerId", 2 },
	{ "OffsetForLeaderEpoch", 4 },
	{ "AddPartitionsToTxn", 3 },
	{ "AddOffsetsToTxn", 3 },
	{ "EndTxn", 3 },
	{ "WriteTxnMarkers", 1 },
	{ "TxnOffsetCommit", 3 },
	{ "DescribeAcls", 2 },
	{ "CreateAcls", 2 },
	{ "DeleteAcls", 2 },
	{ "DescribeConfigs", 4 },
	{ "AlterConfigs", 2 },
	{ "AlterReplicaLogDirs", 2 },
	{ "DescribeLogDirs", 2 },
	{ "SaslAuthenticate", 2 },
	{ "CreatePartitions", 2 },
	{ "CreateDelegationToken", 2 },
	{ "RenewDelegationToken", 2 },
	{ "ExpireDelegationToken", 2 },
	{ "DescribeDelegationToken", 2 },
	{ "DeleteGroups", 2 },
	{ "ElectLeaders", 2 },
	{ "IncrementalAlterConfigs", 1 },
	{ "AlterPartitionReassignments", 0 },
	{ "ListPartitionReassignments", 0 },
	{ "OffsetDelete", KF_NOFLEX },
	{ "DescribeClientQuotas", 1 },
	{ "AlterClientQuotas", 1 },
	{ "DescribeUserScramCredentials", 0 },
	{ "AlterUserScramCredentials", 0 },
	{ "Vote", 0 },
	{ "BeginQuorumEpoch", 1 },
	{ "EndQuorumEpoch", 1 },
	{ "DescribeQuorum", 0 },
	{ "AlterPartition", 0 },
	{ "UpdateFeatures", 0 },
	{ "Envelope", 0 },
	{ "FetchSnapshot", 0 },
	{ "DescribeCluster", 0 },
	{ "DescribeProducers", 0 },
	{ "BrokerRegistration", 0 },
	{ "BrokerHeartbeat", 0 },
	{ "UnregisterBroker", 0 },
	{ "DescribeTransactions", 0 },
	{ "ListTransactions", 0 },
	{ "AllocateProducerIds", 0 },
	{ "ConsumerGroupHeartbeat", 0 },
	{ "ConsumerGroupDescribe", 0 },
	{ "ControllerRegistration", 0 },
	{ "GetTelemetrySubscriptions", 0 },
	{ "PushTelemetry", 0 },
	{ "AssignReplicasToDirs", 0 },
	{ "ListClientMetricsResources", 0 },
	{ "DescribeTopicPartitions", 0 },
};
#define KF_N_API (sizeof(apis) / sizeof(apis[0]))
#define KF_MAX_VERSION 20

enum {
	K_PRODUCE = 0, K_FETCH = 1, K_LIST_OFFSETS = 2, K_METADATA = 3, K_OFFSET_COMMIT = 8,
	K_OFFSET_FETCH = 9, K_FIND_COORDINATOR = 10, K_JOIN_GROUP = 11, K_HEARTBEAT = 12,
	K_LEAVE_GROUP = 13, K_SYNC_GROUP = 14, K_LIST_GROUPS = 16, K_SASL_HANDSHAKE = 17,
	K_API_VERSIONS = 18, K_INIT_PRODUCER_ID = 22, K_ADD_OFFSETS_TO_TXN = 25, K_END_TXN = 26,
	K_SASL_AUTHENTICATE = 36, K_DESCRIBE_CLUSTER = 60,
};

static bool flexible(int key, int ver)
{
	return apis[key].flex != KF_NOFLEX && ver >= apis[key].flex;
}

struct kf_inflight {
	int32_t corr;
	int16_t key, ver;
};

struct kf_state {
	struct l7_counters cnt;
	struct l7_framer d[2];
	struct kf_inflight q[KF_INFLIGHT]; /* a ring, oldest first */
	unsigned head, n;
};

/* A cursor over a kept body: any read past it sets bad (the body was cut or is not Kafka). */
struct kc {
	const uint8_t *p;
	size_t n, off;
	bool flex, bad;
};

static bool kc_need(struct kc *c, size_t k)
{
	if (c->bad || c->n - c->off < k) {
		c->bad = true;
		return false;
	}
	return true;
}

static int64_t kc_int(struct kc *c, unsigned bytes)
{
	uint64_t v = 0;
	if (!kc_need(c, bytes))
		return 0;
	for (unsigned i = 0; i < bytes; i++)
		v = v << 8 | c->p[c->off + i];
	c->off += bytes;
	/* sign-extend */
	if (bytes < 8 && (v >> (bytes * 8 - 1)) & 1)
		v |= ~0ull << (bytes * 8);
	return (int64_t)v;
}

static void kc_skip(struct kc *c, uint64_t k)
{
	if (kc_need(c, k > SIZE_MAX ? SIZE_MAX : (size_t)k))
		c->off += (size_t)k;
}

static uint64_t kc_uvarint(struct kc *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (!kc_need(c, 1))
			return 0;
		uint8_t b = c->p[c->off++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

/* A (nullable) string or bytes: its length, -1 when null; *s its start when all kept. */
static int64_t kc_bytes(struct kc *c, bool wide, const uint8_t **s)
{
	int64_t len = c->flex ? (int64_t)kc_uvarint(c) - 1 : kc_int(c, wide ? 4 : 2);
	if (c->bad || len < -1) {
		c->bad = true;
		return -1;
	}
	if (len >= 0) {
		if (s && kc_need(c, (size_t)len))
			*s = c->p + c->off;
		kc_skip(c, (uint64_t)len);
	}
	return len;
}

/* An array's count, -1 when null. */
static int64_t kc_array(struct kc *c)
{
	int64_t n = c->flex ? (int64_t)kc_uvarint(c) - 1 : kc_int(c, 4);
	if (n < -1)
		c->bad = true;
	return c->bad ? -1 : n;
}

/* Tagged fields, in flexible versions. */
static void kc_tags(struct kc *c)
{
	if (!c->flex)
		return;
	uint64_t n = kc_uvarint(c);
	for (uint64_t i = 0; i < n && !c->bad; i++) {
		kc_uvarint(c);
		kc_skip(c, kc_uvarint(c));
	}
}

static void kc_text(struct kc *c, char *out, size_t cap)
{
	const uint8_t *s = NULL;
	int64_t len = kc_bytes(c, false, &s);
	if (s && len > 0)
		l7_copy_printable(out, cap, s, (size_t)len);
}

/* The first topic or group of a request body (the cursor after the header). */
static void request_subject(struct kc *c, int key, int ver, char *out, size_t cap, bool *noreply)
{
	switch (key) {
	case K_PRODUCE:
		if (ver >= 3)
			kc_bytes(c, false, NULL); /* transactional id */
		*noreply = !c->bad && kc_int(c, 2) == 0 && !c->bad; /* acks */
		kc_skip(c, 4);
		if (kc_array(c) > 0)
			kc_text(c, out, cap);
		break;
	case K_FETCH:
		if (ver >= 13)
			break; /* topics by id */
		kc_skip(c, (ver < 15 ? 4 : 0) + 8 + (ver >= 3 ? 4 : 0) + (ver >= 4 ? 1 : 0) +
				   (ver >= 7 ? 8 : 0));
		if (kc_array(c) > 0)
			kc_text(c, out, cap);
		break;
	case K_LIST_OFFSETS:
		kc_skip(c, 4 + (ver >= 2 ? 1 : 0));
		if (kc_array(c) > 0)
			kc_text(c, out, cap);
		break;
	case K_METADATA:
		if (kc_array(c) > 0) {
			if (ver >= 10)
				kc_skip(c, 16);
			kc_text(c, out, cap);
		}
		break;
	case K_FIND_COORDINATOR:
		if (ver < 4)
			kc_text(c, out, cap);
		break;
	case K_OFFSET_FETCH:
		if (ver < 8)
			kc_text(c, out, cap);
		break;
	case K_OFFSET_COMMIT:
	case K_JOIN_GROUP:
	case K_HEARTBEAT:
	case K_LEAVE_GROUP:
	case K_SYNC_GROUP:
		kc_text(c, out, cap);
		break;
	}
}

/* The error codes read from an answer: the first non-zero, and how many were read. */
struct kerr {
	int first;
	unsigned seen;
};

static void kerr_read(struct kc *c, struct kerr *e)
{
	int v = (int)kc_int(c, 2);
	if (c->bad)
		return;
	e->seen++;
	if (v && !e->first)
		e->first = v;
}

static void produce_errors(struct kc *c, int ver, struct kerr *e)
{
	int64_t topics = kc_array(c);
	for (int64_t t = 0; t < topics && !c->bad && !e->first; t++) {
		kc_bytes(c, false, NULL);
		int64_t parts = kc_array(c);
		for (int64_t i = 0; i < parts && !c->bad && !e->first; i++) {
			kc_skip(c, 4);
			kerr_read(c, e);
			kc_skip(c, 8 + (ver >= 2 ? 8 : 0) + (ver >= 5 ? 8 : 0));
			if (ver >= 8) {
				int64_t recs = kc_array(c);
				for (int64_t k = 0; k < recs && !c->bad; k++) {
					kc_skip(c, 4);
					kc_bytes(c, false, NULL);
					kc_tags(c);
				}
				kc_bytes(c, false, NULL);
			}
			kc_tags(c);
		}
		kc_tags(c);
	}
}

static void fetch_errors(struct kc *c, int ver, struct kerr *e)
{
	if (ver >= 1)
		kc_skip(c, 4);
	if (ver >= 7) {
		kerr_read(c, e);
		kc_skip(c, 4);
	}
	int64_t topics = kc_array(c);
	for (int64_t t = 0; t < topics && !c->bad && !e->first; t++) {
		if (ver >= 13)
			kc_skip(c, 16);
		else
			kc_bytes(c, false, NULL);
		int64_t parts = kc_array(c);
		for (int64_t i = 0; i < parts && !c->bad && !e->first; i++) {
			kc_skip(c, 4);
			kerr_read(c, e);
			kc_skip(c, 8 + (ver >= 4 ? 8 : 0) + (ver >= 5 ? 8 : 0));
			if (ver >= 4) {
				int64_t ab = kc_array(c);
				for (int64_t k = 0; k < ab && !c->bad; k++) {
					kc_skip(c, 16);
					kc_tags(c);
				}
			}
			if (ver >= 11)
				kc_skip(c, 4);
			kc_bytes(c, true, NULL); /* records */
			kc_tags(c);
		}
		kc_tags(c);
	}
}

/* Metadata: the brokers, then the first topic's error. */
static void metadata_errors(struct kc *c, int ver, struct kerr *e)
{
	if (ver >= 3)
		kc_skip(c, 4);
	int64_t brokers = kc_array(c);
	for (int64_t b = 0; b < brokers && !c->bad; b++) {
		kc_skip(c, 4);
		kc_bytes(c, false, NULL);
		kc_skip(c, 4);
		if (ver >= 1)
			kc_bytes(c, false, NULL);
		kc_tags(c);
	}
	if (ver >= 2)
		kc_bytes(c, false, NULL);
	if (ver >= 1)
		kc_skip(c, 4);
	if (kc_array(c) > 0)
		kerr_read(c, e);
}

/* The version from which an answer starts with throttle_time_ms before its error code. */
static int throttle_first(int key)
{
	switch (key) {
	case K_JOIN_GROUP:
		return 2;
	case K_HEARTBEAT:
	case K_LEAVE_GROUP:
	case K_SYNC_GROUP:
	case K_LIST_GROUPS:
	case K_FIND_COORDINATOR:
		return 1;
	case K_INIT_PRODUCER_ID:
	case K_ADD_OFFSETS_TO_TXN:
	case K_END_TXN:
	case K_DESCRIBE_CLUSTER:
		return 0;
	case K_API_VERSIONS:
	case K_SASL_HANDSHAKE:
	case K_SASL_AUTHENTICATE:
		return 1000; /* the error comes first */
	default:
		return -1; /* no top-level error */
	}
}

static void response_status(struct kc *c, int key, int ver, struct l7_msg *m)
{
	struct kerr e = { 0 };
	int t = throttle_first(key);

	if (key == K_PRODUCE) {
		produce_errors(c, ver, &e);
	} else if (key == K_FETCH) {
		fetch_errors(c, ver, &e);
	} else if (key == K_METADATA) {
		metadata_errors(c, ver, &e);
	} else if (key == K_FIND_COORDINATOR && ver >= 4) {
		kc_skip(c, 4);
		if (kc_array(c) > 0) {
			kc_bytes(c, false, NULL);
			kc_skip(c, 4);
			kc_bytes(c, false, NULL);
			kc_skip(c, 4);
			kerr_read(c, &e);
		}
	} else if (t >= 0) {
		if (ver >= t)
			kc_skip(c, 4);
		kerr_read(c, &e);
	}
	if (e.first) {
		m->status = L7_STATUS_FAILED;
		snprintf(m->code, sizeof(m->code), "%d", e.first);
	} else {
		m->status = e.seen ? L7_STATUS_OK : L7_STATUS_UNKNOWN;
	}
}

/* A request header's fields, checked: true when they look like Kafka. */
static bool request_header(const uint8_t *p, size_t n, int *key, int *ver, int32_t *corr)
{
	if (n < 10)
		return false;
	int k = (int16_t)l7_be16(p), v = (int16_t)l7_be16(p + 2);
	int32_t id = (int32_t)l7_be32(p + 4);
	int cl = (int16_t)l7_be16(p + 8);
	if (k < 0 || (size_t)k >= KF_N_API || v < 0 || v > KF_MAX_VERSION || id < 0 || cl < -1)
		return false;
	*key = k;
	*ver = v;
	*corr = id;
	return true;
}

static bool printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] >= 0x7f)
			return false;
	return true;
}

static bool topic_name(const uint8_t *p, int64_t n)
{
	if (n < 1 || n > 249)
		return false;
	for (int64_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || p[i] == '.' || p[i] == '_' || p[i] == '-'))
			return false;
	return true;
}

/* A Produce's fields up to its first topic's name, all in the chunk and sane. */
static bool produce_plausible(const uint8_t *p, size_t n, int key, int ver)
{
	struct kc c = { .p = p + 4, .n = n - 4, .off = 8 };
	const uint8_t *name = NULL;
	kc_bytes(&c, false, NULL);
	c.flex = flexible(key, ver);
	kc_tags(&c);
	if (ver >= 3)
		kc_bytes(&c, false, NULL);
	int64_t acks = kc_int(&c, 2), timeout = kc_int(&c, 4), topics = kc_array(&c);
	int64_t nl = kc_bytes(&c, false, &name);
	return !c.bad && acks >= -1 && acks <= 1 && timeout >= 0 && topics >= 1 &&
	       topics <= 100000 && name && topic_name(name, nl);
}

static bool kf_detect_request(const uint8_t *p, size_t n)
{
	int key, ver;
	int32_t corr;
	if (!p || n < 14)
		return false;
	uint32_t len = l7_be32(p);
	if (len < 10 || len >= KF_DETECT_MAX || !request_header(p + 4, n - 4, &key, &ver, &corr))
		return false;
	int cl = (int16_t)l7_be16(p + 12);
	if (cl > (int)len - 10)
		return false;
	/* the client id, as far as this chunk holds it: printable */
	size_t have = n - 14 < (size_t)(cl > 0 ? cl : 0) ? n - 14 : (size_t)(cl > 0 ? cl : 0);
	if (!printable(p + 14, have))
		return false;
	/*
	 * A Produce is checked further: ZooKeeper's first requests (xid 1..20)
	 * read as Produce versions 1..20 with an empty client id.
	 */
	return key != K_PRODUCE || produce_plausible(p, n, key, ver);
}

/*
 * An answer is a length and a correlation id, then an api's body: nothing a
 * chunk alone can tell from another length-prefixed protocol (ZooKeeper's
 * answers look the same). So no chunk is taken for a Kafka answer by its
 * bytes alone; the parser resynchronises on an id it waits for.
 */
static bool kf_detect_response(const uint8_t *p, size_t n)
{
	return false;
}

static int kf_init(void *sv)
{
	struct kf_state *s = sv;
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < 2; i++)
		l7_framer_init(&s->d[i], 4);
	return 0;
}

static struct l7_counters *kf_counters(void *sv)
{
	return &((struct kf_state *)sv)->cnt;
}

/*
 * Remembers a request's api by correlation id. When full the oldest is
 * forgotten (counted table_full): its answer's status is then unknown.
 */
static void remember(struct kf_state *s, int32_t corr, int key, int ver)
{
	if (s->n == KF_INFLIGHT) {
		s->head = (s->head + 1) % KF_INFLIGHT;
		s->n--;
		s->cnt.table_full++;
	}
	struct kf_inflight *e = &s->q[(s->head + s->n++) % KF_INFLIGHT];
	e->corr = corr;
	e->key = (int16_t)key;
	e->ver = (int16_t)ver;
}

static bool recall(struct kf_state *s, int32_t corr, int *key, int *ver)
{
	for (unsigned i = 0; i < s->n; i++) {
		struct kf_inflight *e = &s->q[(s->head + i) % KF_INFLIGHT];
		if (e->corr != corr)
			continue;
		*key = e->key;
		*ver = e->ver;
		for (unsigned j = i; j + 1 < s->n; j++)
			s->q[(s->head + j) % KF_INFLIGHT] = s->q[(s->head + j + 1) % KF_INFLIGHT];
		s->n--;
		return true;
	}
	return false;
}

static bool known(const struct kf_state *s, int32_t corr)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->q[(s->head + i) % KF_INFLIGHT].corr == corr)
			return true;
	return false;
}

/* A chunk that starts an answer this parser waits for. */
static bool resync_response(const struct kf_state *s, const uint8_t *p, size_t n)
{
	if (!p || n < 8)
		return false;
	uint32_t len = l7_be32(p);
	return len >= 6 && len < KF_MAX_LEN && known(s, (int32_t)l7_be32(p + 4));
}

/* One whole body (its start kept in the reader). False: not Kafka, the framing is lost. */
static bool message(void *sv, struct l7_framer *d, bool req, l7_msg_fn fn, void *ctx)
{
	struct kf_state *s = sv;
	const uint8_t *b = d->r.at;
	size_t n = d->r.have;
	struct l7_msg m;
	l7_msg_init(&m, L7_MSG_REQUEST);
	m.has_id = true;
	int key, ver;
	int32_t corr;

	if (n < (req ? 10u : 4u) && d->r.uncaptured)
		return true; /* its header was not captured: counted truncated, framing kept */
	if (req) {
		if (!request_header(b, n, &key, &ver, &corr))
			return false;
		struct kc c = { .p = b, .n = n, .off = 8 };
		kc_bytes(&c, false, NULL); /* client id: never flexible */
		c.flex = flexible(key, ver);
		kc_tags(&c);
		char subject[128] = "";
		bool noreply = false;
		request_subject(&c, key, ver, subject, sizeof(subject), &noreply);
		m.kind = noreply ? L7_MSG_REQUEST_NOREPLY : L7_MSG_REQUEST;
		m.id = (uint32_t)corr;
		l7_join(m.op, sizeof(m.op), apis[key].name, NULL);
		snprintf(m.text, sizeof(m.text), "%s%s%s", m.op, subject[0] ? " " : "", subject);
		if (!noreply)
			remember(s, corr, key, ver);
	} else {
		if (n < 4 || (int32_t)l7_be32(b) < 0)
			return false;
		corr = (int32_t)l7_be32(b);
		m.kind = L7_MSG_RESPONSE;
		m.id = (uint32_t)corr;
		m.status = L7_STATUS_UNKNOWN;
		if (recall(s, corr, &key, &ver)) {
			struct kc c = { .p = b, .n = n, .off = 4 };
			c.flex = flexible(key, ver) && key != K_API_VERSIONS;
			kc_tags(&c);
			response_status(&c, key, ver, &m);
		}
	}
	s->cnt.messages++;
	fn(ctx, &m);
	return true;
}

static int64_t body_len(const uint8_t *hdr, bool req)
{
	uint32_t len = l7_be32(hdr);
	return len < (req ? 10u : 4u) || len >= KF_MAX_LEN ? -1 : (int64_t)len;
}

/* an answer resynchronises only on a correlation id this parser is waiting for */
static bool resync(void *sv, const uint8_t *data, size_t captured, bool req)
{
	return req ? kf_detect_request(data, captured) : resync_response(sv, data, captured);
}

static const struct l7_framing kf_framing = {
	.header = 4, .body_len = body_len, .resync = resync, .message = message
};

static void kf_feed(void *sv, enum l7_dir dir, const uint8_t *data, size_t captured, size_t total,
		    l7_msg_fn fn, void *ctx)
{
	struct kf_state *s = sv;
	l7_framer_feed(&s->d[dir], &kf_framing, &s->cnt, s, dir == L7_DIR_REQUEST, data, captured,
		       total, fn, ctx);
}

const struct l7_proto l7_proto_kafka = {
	.name = "kafka",
	.family = L7_FAMILY_REQUESTS,
	.pair = L7_PAIR_BY_ID,
	.default_port = 9092,
	.state_size = sizeof(struct kf_state),
	.detect_request = kf_detect_request,
	.detect_response = kf_detect_response,
	.init = kf_init,
	.feed = kf_feed,
	.counters = kf_counters,
};
