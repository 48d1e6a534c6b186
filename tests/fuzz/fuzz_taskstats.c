/*
 * libFuzzer target for src/resources/taskstats.c's reply parsers: the input
 * is one received netlink datagram. Byte 0 picks the parser (even: a
 * TASKSTATS_CMD_GET reply, odd: a CTRL_CMD_GETFAMILY reply); the rest is
 * copied into a buffer of its exact size, so a read past the datagram is
 * caught. Besides crashes it checks that a success fills what it says and
 * an error is a negative errno.
 */
#include <errno.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resources/taskstats.h"

#include "fuzz_check.h"

#define FAMILY 27

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t len = size - 1;
	uint8_t *buf = malloc(len ? len : 1);
	CHECK(buf);
	memcpy(buf, data + 1, len);
	if (data[0] & 1) {
		uint16_t fam = 0;
		int rc = taskstats_parse_family(buf, len, &fam);
		CHECK(rc <= 0 && rc >= -4095);
		CHECK(rc != 0 || fam != 0);
	} else {
		struct taskstats_delays d;
		memset(&d, 0xa5, sizeof(d));
		int rc = taskstats_parse_reply(buf, len, FAMILY, &d);
		CHECK(rc <= 0 && rc >= -4095);
		/* Headers, the outer and the stats attribute, and at least the v1 fields. */
		if (rc == 0)
			CHECK(len >= NLMSG_HDRLEN + GENL_HDRLEN + 2 * NLA_HDRLEN +
					     offsetof(struct taskstats, blkio_delay_total) + 8);
	}
	free(buf);
	return 0;
}
