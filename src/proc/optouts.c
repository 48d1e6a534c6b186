#define _GNU_SOURCE /* memmem */
#include "proc/optouts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/file.h"

static const struct {
	const char *name;
	uint8_t bit;
} variables[] = {
	{ "COROOT_EBPF_TRACES", PROC_OPTOUT_TRACES },
	{ "COROOT_LOG_MONITORING", PROC_OPTOUT_LOGS },
	{ "COROOT_EBPF_PROFILING", PROC_OPTOUT_PROFILING },
};

uint8_t proc_optouts_parse(const char *env, size_t len)
{
	uint8_t bits = 0;

	for (size_t at = 0; at < len;) {
		const char *var = env + at;
		const char *nul = memchr(var, '\0', len - at);
		size_t n = nul ? (size_t)(nul - var) : len - at;
		at += n + 1;
		if (n < 7 || memcmp(var, "COROOT_", 7))
			continue;
		const char *eq = memchr(var, '=', n);
		if (!eq)
			continue;
		size_t name_len = (size_t)(eq - var), value_len = n - name_len - 1;
		for (size_t i = 0; i < sizeof(variables) / sizeof(variables[0]); i++) {
			if (strlen(variables[i].name) != name_len ||
			    memcmp(var, variables[i].name, name_len))
				continue;
			/* As Coroot: the value contains "disabled"; the last assignment counts. */
			if (memmem(eq + 1, value_len, "disabled", 8))
				bits |= variables[i].bit;
			else
				bits &= (uint8_t)~variables[i].bit;
		}
	}
	return bits;
}

int proc_optouts_read(pid_t pid, uint8_t *out)
{
	static __thread char buf[PROC_ENVIRON_MAX];
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	ssize_t n = file_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	*out = proc_optouts_parse(buf, (size_t)n);
	return 0;
}
