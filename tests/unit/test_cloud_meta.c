/*
 * The cloud metadata answers (src/node/cloud_meta.c) as Coroot's agent
 * reads them: each provider's row, the text, JSON, YAML and KEY=VALUE
 * bodies, the values cut from paths and the labels derived from others,
 * and answers that are no metadata refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "node/cloud_meta.h"

static struct cloud_answers ans;

/* The first request of provider p whose first field goes to label (or CLOUD_TOKEN). */
static const struct cloud_request *request(const char *p, int label)
{
	const struct cloud_provider *row = cloud_provider_find(p);
	assert_non_null(row);
	for (int i = 0; i < CLOUD_MAX_REQUESTS && row->requests[i].path; i++)
		for (int f = 0; f < CLOUD_MAX_FIELDS; f++)
			if (row->requests[i].fields[f].label == label &&
			    (f == 0 || row->requests[i].fields[f].key))
				return &row->requests[i];
	fail_msg("%s: no request for label %d", p, label);
	return NULL;
}

static int parse(const struct cloud_request *rq, const char *body)
{
	return cloud_parse(rq, body, strlen(body), &ans);
}

#define V(l) ans.cloud.v[NODE_CLOUD_##l]

static void test_rows(void **state)
{
	static const char *const names[] = { "AWS",	 "GCP",	     "Azure",  "Hetzner", "DigitalOcean",
					     "Alibaba", "Scaleway", "Oracle", "IBM" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct cloud_provider *p = cloud_provider_find(names[i]);
		assert_non_null(p);
		assert_non_null(p->requests[0].path);
		assert_string_equal(p->name, names[i]);
	}
	assert_null(cloud_provider_find(""));
	assert_null(cloud_provider_find("aws"));
	assert_null(cloud_provider_find(NULL));

	const struct cloud_provider *aws = cloud_provider_find("AWS");
	assert_string_equal(aws->requests[0].method, "PUT"); /* IMDSv2: the token first */
	assert_int_equal(aws->requests[0].fields[0].label, CLOUD_TOKEN);
	assert_string_equal(aws->token_header, "X-aws-ec2-metadata-token: %s");
	assert_string_equal(cloud_provider_find("GCP")->header, "Metadata-Flavor: Google");
	assert_string_equal(cloud_provider_find("Azure")->header, "Metadata: True");
	assert_string_equal(cloud_provider_find("Alibaba")->bases[0],
			    "http://100.100.100.200/latest/meta-data/");
	assert_string_equal(cloud_provider_find("Scaleway")->bases[0], "http://169.254.42.42/conf");
	assert_string_equal(cloud_provider_find("IBM")->bases[1], "https://api.metadata.cloud.ibm.com");
}

static void test_text(void **state)
{
	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(request("AWS", CLOUD_TOKEN), "AQAEAtok=="), 0);
	assert_string_equal(ans.token, "AQAEAtok==");
	assert_int_equal(parse(request("AWS", NODE_CLOUD_INSTANCE_ID), "i-0abc\r\n"), 0);
	assert_string_equal(V(INSTANCE_ID), "i-0abc");
	assert_int_equal(parse(request("AWS", NODE_CLOUD_REGION), ""), 0);
	assert_string_equal(V(REGION), "");
	/* no label from control characters, bytes past ASCII, or a value cut short */
	assert_int_equal(parse(request("AWS", NODE_CLOUD_REGION), "eu\x01west"), -EINVAL);
	assert_int_equal(parse(request("AWS", NODE_CLOUD_REGION), "eu\xc3\xa9"), -EINVAL);
	char lng[200];
	memset(lng, 'a', sizeof(lng) - 1);
	lng[sizeof(lng) - 1] = '\0';
	assert_int_equal(parse(request("AWS", NODE_CLOUD_REGION), lng), -EINVAL);
	/* a token may be longer (IBM's are JWTs) */
	assert_int_equal(parse(request("AWS", CLOUD_TOKEN), lng), 0);
	/* NUL inside the body */
	assert_int_equal(cloud_parse(request("AWS", NODE_CLOUD_REGION), "a\0b", 3, &ans), -EINVAL);
}

static void test_gcp_values(void **state)
{
	memset(&ans, 0, sizeof(ans));
	const struct cloud_request *type = request("GCP", NODE_CLOUD_INSTANCE_TYPE);
	assert_int_equal(parse(type, "projects/123/machineTypes/e2-standard-4"), 0);
	assert_string_equal(V(INSTANCE_TYPE), "e2-standard-4");
	assert_int_equal(parse(type, "projects/123/machineTypes/a/b"), 0); /* Go's SplitN(4) */
	assert_string_equal(V(INSTANCE_TYPE), "a/b");
	assert_int_equal(parse(type, "projects/123/e2"), 0);
	assert_string_equal(V(INSTANCE_TYPE), "");
	const struct cloud_request *lc = request("GCP", NODE_CLOUD_INSTANCE_LIFE_CYCLE);
	assert_int_equal(parse(lc, "TRUE"), 0);
	assert_string_equal(V(INSTANCE_LIFE_CYCLE), "preemptible");
	assert_int_equal(parse(lc, "false"), 0);
	assert_string_equal(V(INSTANCE_LIFE_CYCLE), "on-demand");
	assert_int_equal(parse(lc, "maybe"), 0);
	assert_string_equal(V(INSTANCE_LIFE_CYCLE), "");

	/* no project, no answer (Coroot gives up there) */
	assert_int_equal(parse(request("GCP", NODE_CLOUD_ACCOUNT_ID), "\n"), -EINVAL);
	assert_int_equal(parse(request("GCP", NODE_CLOUD_ACCOUNT_ID), "proj"), 0);
	assert_string_equal(V(ACCOUNT_ID), "proj");

	assert_int_equal(parse(request("GCP", NODE_CLOUD_AVAILABILITY_ZONE),
			       "projects/123/zones/us-central1-a"), 0);
	cloud_derive(cloud_provider_find("GCP"), &ans.cloud);
	assert_string_equal(V(REGION), "us-central1");
	assert_string_equal(V(AVAILABILITY_ZONE), "us-central1-a");
}

static const char azure_doc[] =
	"{\"compute\": {\"location\": \"westeurope\", \"vmId\": \"02aa\", \"vmSize\": \"D2\","
	" \"zone\": \"2\", \"subscriptionId\": \"8d10\", \"tags\": \"\"},"
	" \"network\": {\"interface\": [{\"ipv4\": {\"ipAddress\": [{\"privateIpAddress\": "
	"\"10.1.0.4\", \"publicIpAddress\": \"\"}]}}]}}";

static void test_json(void **state)
{
	const struct cloud_request *doc = request("Azure", NODE_CLOUD_ACCOUNT_ID);

	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(doc, azure_doc), 0);
	assert_string_equal(V(ACCOUNT_ID), "8d10");
	assert_string_equal(V(INSTANCE_ID), "02aa"); /* "vmID" in Coroot: Go matches any case */
	assert_string_equal(V(INSTANCE_TYPE), "D2");
	assert_string_equal(V(REGION), "westeurope");
	assert_string_equal(V(AVAILABILITY_ZONE), "2");
	assert_string_equal(V(LOCAL_IPV4), "10.1.0.4");
	assert_string_equal(V(PUBLIC_IPV4), "");

	/* what is missing, null or an empty list is "" */
	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(doc, "{\"compute\": {\"location\": \"x\"}, \"network\": "
				    "{\"interface\": []}}"), 0);
	assert_string_equal(V(REGION), "x");
	assert_string_equal(V(LOCAL_IPV4), "");
	assert_int_equal(parse(doc, "{\"compute\": null}"), 0);
	assert_string_equal(V(REGION), "");

	/* what Go's decoder refuses */
	static const char *const bad[] = {
		"",
		"<html>not metadata</html>",
		"[1, 2]",
		"\"text\"",
		"{\"compute\": \"text\"}",
		"{\"compute\": {\"location\": 7}}",
		"{\"network\": {\"interface\": {\"0\": 1}}}",
		"{\"compute\": {\"location\": \"a\"}",
		"{\"compute\": {\"location\": \"tab\\there\"}}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (parse(doc, bad[i]) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);

	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(request("AWS", NODE_CLOUD_ACCOUNT_ID),
			       "{\"Code\": \"Success\", \"AccountId\": \"123456789012\"}"), 0);
	assert_string_equal(V(ACCOUNT_ID), "123456789012");
	assert_int_equal(parse(request("IBM", CLOUD_TOKEN), "{\"access_token\": \"eyJ.x.y\"}"), 0);
	assert_string_equal(ans.token, "eyJ.x.y");
	assert_int_equal(parse(request("IBM", NODE_CLOUD_INSTANCE_ID),
			       "{\"id\": \"0717_1\", \"profile\": {\"name\": \"bx2-2x8\"}, "
			       "\"zone\": {\"name\": \"us-south-3\"}}"), 0);
	assert_string_equal(V(INSTANCE_TYPE), "bx2-2x8");
	cloud_derive(cloud_provider_find("IBM"), &ans.cloud);
	assert_string_equal(V(AVAILABILITY_ZONE), "us-south-3");
	assert_string_equal(V(REGION), "us-south");
}

static void test_yaml(void **state)
{
	const struct cloud_request *doc = request("Hetzner", NODE_CLOUD_INSTANCE_ID);

	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(doc, "availability-zone: hel1-dc2\r\nhostname: n\n"
				    "instance-id: 42 # a comment\nlocal-ipv4: ''\n"
				    "public-ipv4: \"95.216.1.2\"\n"
				    "network-config:\n  region: nested\nregion:   eu-central  \n"
				    "public-keys: []"), 0);
	assert_string_equal(V(AVAILABILITY_ZONE), "hel1-dc2");
	assert_string_equal(V(INSTANCE_ID), "42");
	assert_string_equal(V(LOCAL_IPV4), "");
	assert_string_equal(V(PUBLIC_IPV4), "95.216.1.2");
	assert_string_equal(V(REGION), "eu-central"); /* the top-level one, not the nested */

	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(doc, "region:x\ninstance-id: 7"), 0); /* "region:x" maps nothing */
	assert_string_equal(V(REGION), "");
	assert_string_equal(V(INSTANCE_ID), "7");
	/* none of the keys: no metadata */
	assert_int_equal(parse(doc, "<html>\n<body>busy</body>\n</html>\n"), -EINVAL);
	assert_int_equal(parse(doc, ""), -EINVAL);
	assert_int_equal(parse(doc, "region: eu\x7f"), -EINVAL);
}

static void test_kv(void **state)
{
	const struct cloud_request *conf = request("Scaleway", NODE_CLOUD_INSTANCE_ID);

	memset(&ans, 0, sizeof(ans));
	assert_int_equal(parse(conf, "COMMERCIAL_TYPE=DEV1-S\r\nID=5e2c\nZONE=fr-par-1\n"
				     "NAME=a=b\nZONE=fr-par-2"), 0);
	assert_string_equal(V(INSTANCE_TYPE), "DEV1-S");
	assert_string_equal(V(INSTANCE_ID), "5e2c");
	assert_string_equal(V(AVAILABILITY_ZONE), "fr-par-2"); /* the last one, as Go's map */
	cloud_derive(cloud_provider_find("Scaleway"), &ans.cloud);
	assert_string_equal(V(REGION), "fr-par");
	assert_int_equal(parse(conf, "nothing here"), -EINVAL);
	assert_int_equal(parse(conf, "ZONE"), -EINVAL);
}

static void test_derive(void **state)
{
	struct node_cloud c;
	const struct cloud_provider *scw = cloud_provider_find("Scaleway"),
				    *oracle = cloud_provider_find("Oracle"),
				    *gcp = cloud_provider_find("GCP"),
				    *dgo = cloud_provider_find("DigitalOcean");

	memset(&c, 0, sizeof(c));
	strcpy(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "nl-ams"); /* no number: the zone is the region */
	cloud_derive(scw, &c);
	assert_string_equal(c.v[NODE_CLOUD_REGION], "nl-ams");
	strcpy(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "zone-");
	cloud_derive(scw, &c);
	assert_string_equal(c.v[NODE_CLOUD_REGION], "zone-");

	memset(&c, 0, sizeof(c));
	strcpy(c.v[NODE_CLOUD_REGION], "eu-frankfurt-1");
	strcpy(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "Uocm:EU-FRANKFURT-1-AD-2");
	cloud_derive(oracle, &c);
	assert_string_equal(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "eu-frankfurt-1-ad-2");
	strcpy(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "Uocm:EU-FRANKFURT-1-ad-2"); /* Go's match is exact */
	cloud_derive(oracle, &c);
	assert_string_equal(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "");
	memset(c.v[NODE_CLOUD_REGION], 'r', NODE_DMI_MAX - 1); /* too long: no zone, not a cut one */
	strcpy(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "x-AD-1");
	cloud_derive(oracle, &c);
	assert_string_equal(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "");

	memset(&c, 0, sizeof(c));
	strcpy(c.v[NODE_CLOUD_REGION], "kept");
	cloud_derive(gcp, &c); /* no zone: the region stays */
	assert_string_equal(c.v[NODE_CLOUD_REGION], "kept");
	strcpy(c.v[NODE_CLOUD_REGION], "fra1");
	cloud_derive(dgo, &c);
	assert_string_equal(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "fra1");
}

/* The service's labels over DMI's, the flags over both. */
static void test_apply(void **state)
{
	struct node_dmi d = { 0 };
	struct node_cloud c, service = { 0 };
	const struct node_cloud_flags flags = { .region = "r-flag", .instance_type = "t-flag" };

	strcpy(d.board_vendor, "Amazon EC2");
	strcpy(d.board_asset_tag, "i-0abc");
	strcpy(service.v[NODE_CLOUD_REGION], "eu-west-1");
	strcpy(service.v[NODE_CLOUD_AVAILABILITY_ZONE], "eu-west-1b");
	strcpy(service.v[NODE_CLOUD_INSTANCE_ID], "i-0def");
	node_cloud_detect(&d, &flags, &c);
	node_cloud_apply(&c, &service, &flags);
	assert_string_equal(c.v[NODE_CLOUD_PROVIDER], "AWS");
	assert_string_equal(c.v[NODE_CLOUD_INSTANCE_ID], "i-0def");
	assert_string_equal(c.v[NODE_CLOUD_REGION], "r-flag");
	assert_string_equal(c.v[NODE_CLOUD_AVAILABILITY_ZONE], "eu-west-1b");
	assert_string_equal(c.v[NODE_CLOUD_INSTANCE_TYPE], "t-flag");
	assert_string_equal(node_cloud_provider(&d), "AWS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows), cmocka_unit_test(test_text), cmocka_unit_test(test_gcp_values),
		cmocka_unit_test(test_json), cmocka_unit_test(test_yaml), cmocka_unit_test(test_kv),
		cmocka_unit_test(test_derive), cmocka_unit_test(test_apply),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
