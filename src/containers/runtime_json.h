/*
 * Parsers (pure: bytes in, metadata out) of the state files container
 * runtimes keep on disk, so names, images and labels are known without
 * talking to a runtime's API:
 *  - Docker's /var/lib/docker/containers/<id>/config.v2.json;
 *  - an OCI bundle's config.json (containerd tasks, CRI-O and podman
 *    userdata): its annotations, where the CRI runtimes put the pod's names;
 *  - containers-storage's containers.json index (podman's names and images,
 *    which its config.json lacks).
 * JSON is read with Debian's jansson (the project had only a writer,
 * src/trace/json.c): small, strict (RFC 8259, UTF-8 checked, "\u0000"
 * refused, so values stay C strings), errors with line and column, and
 * fuzzed upstream; a tree per file is fine off the event path, for files of
 * a few KiB. Each returns 0, or -EINVAL for input that is
 * not JSON or not shaped as expected (truncated, garbage), -ENOENT when the
 * index has no such container, -ENOMEM; containers_json_last_error() says
 * why. On error `out` may hold part of the fields: free it either way.
 */
#ifndef NODESCOPE_CONTAINERS_RUNTIME_JSON_H
#define NODESCOPE_CONTAINERS_RUNTIME_JSON_H

#include <stddef.h>

#include "containers/meta.h"

/*
 * Name (without '/'), Config.Image, Config.Labels, NOMAD_* of Config.Env,
 * the published TCP ports of NetworkSettings.Ports (null until the
 * container has run).
 */
int containers_parse_docker_config(const char *buf, size_t len, struct containers_meta *out);

/*
 * Docker's hostconfig.json: the PortBindings asked for (host ports given as
 * numbers), when out has no ports from config.v2.json yet.
 */
int containers_parse_docker_hostconfig(const char *buf, size_t len, struct containers_meta *out);

/*
 * Annotations become labels; the CRI names are also given under the label
 * names Coroot reads (io.kubernetes.pod.name, .pod.namespace,
 * .container.name) when absent: containerd's io.kubernetes.cri.sandbox-name,
 * sandbox-namespace, container-name, and CRI-O's io.kubernetes.cri-o.Labels
 * (a JSON object in a string). Image from the CRI image-name annotations;
 * NOMAD_* from process.env. No name: a bundle does not hold one.
 */
int containers_parse_oci_config(const char *buf, size_t len, struct containers_meta *out);

/* The entry of `id` in a containers.json index: names[0] and metadata's image-name. */
int containers_parse_storage_index(const char *buf, size_t len, const char *id,
				   struct containers_meta *out);

/* Why the last call in this thread failed. */
const char *containers_json_last_error(void);

#endif
