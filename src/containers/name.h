/*
 * Container naming rules, step two (pure): a classified cgroup plus the
 * runtime's metadata -> Coroot's container_id and app_id. Coroot's calcId()
 * (containers/registry.go) and ContainerIdToOtelServiceName() (common/otel.go).
 *
 * The whole path, for a caller:
 *   at exec (cheap, no file read): containers_classify(proc_cgroup_text, base, &c)
 *     or containers_classify_path(v2_path_of_cgroup_id, &c);
 *   if containers_kind_info(c.kind)->needs_metadata, off the event path:
 *     containers_meta_read(c.kind, c.runtime_id, host_root, roots, &md) (runtime_read.h),
 *     once per runtime id, retried later on -ENOENT while the runtime writes it;
 *   then containers_name(&c, rc ? NULL : &md, time(NULL), &name): container_id,
 *     app_id, and whether Coroot would have named it (name.source); until the
 *     metadata is in, containers_name(&c, NULL, ...) gives a usable interim id.
 */
#ifndef NODESCOPE_CONTAINERS_NAME_H
#define NODESCOPE_CONTAINERS_NAME_H

#include <stdint.h>

#include "containers/meta.h"
#include "containers/rules.h"

enum containers_id_source {
	CONTAINERS_ID_COROOT,	   /* the id Coroot's agent gives this container */
	CONTAINERS_ID_IGNORED,	   /* Coroot makes no container of it (standalone, lxc,
				      monitor, pause container, unnamed); id is ours */
	CONTAINERS_ID_NO_METADATA, /* the kind needs metadata and none was given; id is ours */
};

struct containers_name {
	char id[CONTAINERS_PATH_MAX];	  /* the container_id label: never empty */
	char app_id[CONTAINERS_PATH_MAX]; /* the app_id label: "" unless a k8s workload */
	enum containers_id_source source;
};

/*
 * The ids of a classified container. md: the runtime's metadata, NULL when
 * it was not (or could not be) read. now: Unix seconds, for telling a
 * CronJob's pod name (<cronjob>-<minutes since the epoch>-<5>) from any other
 * name with eight digits in it: the minute must be within 7 days of now.
 * When Coroot would have no id, `id` is ours (the cgroup path, or the rule's
 * id: "/lxc/x"), so no process goes unnamed; `source` says which it is.
 * Returns 0 or -ENAMETOOLONG.
 */
int containers_name(const struct containers_class *c, const struct containers_meta *md,
		    int64_t now, struct containers_name *out);

/*
 * app_id of a container_id: "/k8s/<ns>/<workload>" with the pod name's
 * generated suffix removed (deployment "-<hash>-<5>", daemonset "-<5>",
 * statefulset "-<n>"), "" for every other id (Coroot's
 * ContainerIdToOtelServiceName, whose result is dropped when it is the id
 * itself: so "" for /k8s-cronjob/ ids too). Returns 0 or -ENAMETOOLONG.
 */
int containers_app_id(const char *container_id, char *out, size_t outlen);

#endif
