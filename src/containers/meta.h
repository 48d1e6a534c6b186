/*
 * A container's runtime metadata, as the naming needs it: name, image,
 * labels and the NOMAD_* environment (Coroot's ContainerMetadata, the parts
 * its calcId reads). Filled by the parsers in runtime_json.h; owned strings.
 */
#ifndef NODESCOPE_CONTAINERS_META_H
#define NODESCOPE_CONTAINERS_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds on what one container may bring: the files are the runtime's, not ours. */
#define CONTAINERS_META_MAX_LABELS 512
#define CONTAINERS_META_MAX_VALUE 4096 /* longer labels are skipped, not cut */
#define CONTAINERS_META_MAX_PORTS 1024	/* "-p 1000-2000:..." publishes one per port */

struct containers_kv {
	char *key, *value;
};

/* A TCP port Docker publishes on the host: 0.0.0.0 or :: for every address of the host. */
struct containers_port {
	uint16_t family; /* AF_INET, AF_INET6 */
	uint16_t port;
	uint8_t ip[16];	 /* network byte order, IPv4 in the first 4 bytes */
};

struct containers_meta {
	char *name;  /* docker/podman name without the leading '/'; NULL when none */
	char *image; /* the image as the user named it; NULL when unknown */
	struct containers_kv *labels;
	size_t n_labels;
	struct containers_kv *env; /* only NOMAD_* variables: all calcId reads */
	size_t n_env;
	/* Docker's published TCP ports (NetworkSettings.Ports, else HostConfig.PortBindings) */
	struct containers_port *ports;
	size_t n_ports;
	bool ports_final;   /* from NetworkSettings.Ports: the running container's own */
	bool ports_pending; /* a binding whose host port Docker picks as it starts the container */
};

#define CONTAINERS_META_INIT { 0 }

void containers_meta_free(struct containers_meta *m);

/* The value, or NULL when absent. */
const char *containers_meta_label(const struct containers_meta *m, const char *key);
const char *containers_meta_env(const struct containers_meta *m, const char *key);

/*
 * Sets key to value (replacing an earlier value). 0, -ENOMEM, -E2BIG when
 * the value is too long or the container has too many labels (skipped).
 */
int containers_meta_set_label(struct containers_meta *m, const char *key, const char *value);
int containers_meta_set_env(struct containers_meta *m, const char *key, const char *value);
/*
 * Adds a published port "host_ip" ("" for every address: 0.0.0.0 and ::),
 * "host_port" (a number; a range or "" is not known before the container
 * runs: skipped). 0, -EINVAL skipped, -E2BIG too many, -ENOMEM.
 */
int containers_meta_add_port(struct containers_meta *m, const char *host_ip, const char *host_port);

/* Replaces *field (name or image) by a copy of value: 0 or -ENOMEM. */
int containers_meta_set_string(char **field, const char *value);

#endif
