#include "containers/kind.h"

/*
 * Declarations as data: one row per kind, in enum order. Of the kinds Coroot
 * ignores, nodescope still reports the ones that are containers to a user
 * (an unknown runtime's, LXC's: never drop a container) and leaves out what
 * is not a container (processes outside any, pod sandboxes, runtime monitors).
 */
static const struct containers_kind_info kinds[CONTAINERS_KIND_COUNT] = {
	[CONTAINERS_UNKNOWN] = { "unknown", false, true, true },
	[CONTAINERS_STANDALONE] = { "standalone", false, true, false },
	[CONTAINERS_DOCKER] = { "docker", true, false, true },
	[CONTAINERS_CRIO] = { "crio", true, false, true },
	[CONTAINERS_CONTAINERD] = { "cri-containerd", true, false, true },
	[CONTAINERS_PODMAN] = { "podman", true, false, true },
	/* Coroot asks for its metadata with an empty id and so never names it */
	[CONTAINERS_SANDBOX] = { "sandbox", false, true, false },
	[CONTAINERS_SYSTEMD] = { "systemd", false, false, true },
	[CONTAINERS_TALOS] = { "talos", false, false, true },
	[CONTAINERS_LXC] = { "lxc", false, true, true },
	[CONTAINERS_CONMON] = { "conmon", false, true, false },
};

const struct containers_kind_info *containers_kind_info(enum containers_kind kind)
{
	if ((unsigned)kind >= CONTAINERS_KIND_COUNT)
		kind = CONTAINERS_UNKNOWN;
	return &kinds[kind];
}
