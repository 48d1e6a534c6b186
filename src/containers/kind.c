#include "containers/kind.h"

/* Declarations as data: one row per kind, in enum order. */
static const struct containers_kind_info kinds[CONTAINERS_KIND_COUNT] = {
	[CONTAINERS_UNKNOWN] = { "unknown", false, true },
	[CONTAINERS_STANDALONE] = { "standalone", false, true },
	[CONTAINERS_DOCKER] = { "docker", true, false },
	[CONTAINERS_CRIO] = { "crio", true, false },
	[CONTAINERS_CONTAINERD] = { "cri-containerd", true, false },
	[CONTAINERS_PODMAN] = { "podman", true, false },
	/* Coroot asks for its metadata with an empty id and so never names it */
	[CONTAINERS_SANDBOX] = { "sandbox", false, true },
	[CONTAINERS_SYSTEMD] = { "systemd", false, false },
	[CONTAINERS_TALOS] = { "talos", false, false },
	[CONTAINERS_LXC] = { "lxc", false, true },
	[CONTAINERS_CONMON] = { "conmon", false, true },
};

const struct containers_kind_info *containers_kind_info(enum containers_kind kind)
{
	if ((unsigned)kind >= CONTAINERS_KIND_COUNT)
		kind = CONTAINERS_UNKNOWN;
	return &kinds[kind];
}
