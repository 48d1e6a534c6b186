#include "event.h"

#include <errno.h>
#include <string.h>

static void copy_bounded(char *dst, const char *src, size_t src_cap, size_t used)
{
	size_t n = used < src_cap ? used : src_cap;
	n = strnlen(src, n);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int proc_event_decode(const void *data, size_t len, struct proc_event *out)
{
	const struct ns_proc_head *h = data;

	if (len < sizeof(*h))
		return -EINVAL;
	memset(out, 0, offsetof(struct proc_event, comm));
	out->comm[0] = out->exe[0] = out->args[0] = '\0';
	out->type = h->type;
	out->pid = h->pid;
	out->ts_ns = h->ts_ns;

	switch (h->type) {
	case NS_PROC_EXEC: {
		const struct ns_proc_exec *e = data;
		if (len < sizeof(*e))
			return -EINVAL;
		out->ppid = e->ppid;
		out->uid = e->uid;
		out->cgroups = e->cgroups;
		copy_bounded(out->comm, e->comm, NS_COMM_LEN, NS_COMM_LEN);
		copy_bounded(out->exe, e->filename, NS_PATH_LEN, e->filename_len);
		size_t n = e->args_len < NS_ARGS_LEN ? e->args_len : NS_ARGS_LEN;
		memcpy(out->args, e->args, n);
		/* argv is NUL-separated; the last NUL ends it. */
		while (n && out->args[n - 1] == '\0')
			n--;
		for (size_t i = 0; i < n; i++)
			if (out->args[i] == '\0')
				out->args[i] = ' ';
		out->args[n] = '\0';
		return 0;
	}
	case NS_PROC_EXIT: {
		const struct ns_proc_exit *e = data;
		if (len < sizeof(*e))
			return -EINVAL;
		out->exit_code = e->exit_code;
		out->signal = e->signal;
		out->duration_ns = e->duration_ns;
		out->cgroups = e->cgroups;
		copy_bounded(out->comm, e->comm, NS_COMM_LEN, NS_COMM_LEN);
		return 0;
	}
	case NS_PROC_FORK: {
		const struct ns_proc_fork *e = data;
		if (len < sizeof(*e))
			return -EINVAL;
		out->ppid = e->ppid;
		out->cgroups.v2 = e->cgroup_id;
		copy_bounded(out->comm, e->comm, NS_COMM_LEN, NS_COMM_LEN);
		return 0;
	}
	case NS_PROC_OOM_KILL: {
		const struct ns_proc_oom *e = data;
		if (len < sizeof(*e))
			return -EINVAL;
		out->trigger_pid = e->trigger_pid;
		return 0;
	}
	}
	return -EINVAL;
}

const char *proc_event_type_name(enum ns_proc_event_type t)
{
	switch (t) {
	case NS_PROC_EXEC:
		return "exec";
	case NS_PROC_EXIT:
		return "exit";
	case NS_PROC_FORK:
		return "fork";
	case NS_PROC_OOM_KILL:
		return "oom_kill";
	}
	return "unknown";
}
