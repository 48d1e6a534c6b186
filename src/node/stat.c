#include "stat.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"

const char *const node_cpu_mode_names[NODE_CPU_MODES] = {
	"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal",
};

int node_stat_parse(const char *text, struct node_cpu *out)
{
	const char *p = text;
	int found = 0;

	*out = (struct node_cpu){ 0 };
	while (*p) {
		if (!strncmp(p, "cpu ", 4)) {
			const char *f = p + 4;
			for (int m = 0; m < NODE_CPU_MODES; m++) {
				int err = node_field_u64(&f, &out->ticks[m]);
				if (err)
					return err;
			}
			found = 1;
		} else if (!strncmp(p, "cpu", 3) && p[3] >= '0' && p[3] <= '9') {
			out->logical_cores++; /* one line per online CPU */
		}
		node_field_next_line(&p);
	}
	return found ? 0 : -EINVAL;
}

int node_uptime_parse(const char *text, double *out)
{
	char *end;
	double up = strtod(text, &end), idle;

	if (end == text || (*end != ' ' && *end != '\t'))
		return -EINVAL;
	const char *second = end;
	idle = strtod(second, &end);
	if (end == second || (*end && *end != '\n'))
		return -EINVAL;
	if (!isfinite(up) || up < 0 || !isfinite(idle))
		return -EINVAL;
	*out = up;
	return 0;
}
