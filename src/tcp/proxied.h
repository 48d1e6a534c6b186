/*
 * Docker's published ports as the listens of the container they lead to:
 * container_net_tcp_listen_info{proxy="dockerd"}, as Coroot's agent writes
 * them (containers/container.go getProxiedListens): one series per host
 * address and port of a binding, a binding on 0.0.0.0 (::) expanded to
 * every IPv4 (IPv6) address of the host's network namespace (PID 1's),
 * loopback included, link-local and interfaces that are down left out,
 * ports of the ephemeral range too (but 50051). So a client of the host's
 * address and port is matched to the container, not to dockerd.
 * The bindings come with the container's metadata (runtime_json.h); the
 * series are made anew at each exposition (the host's addresses change)
 * and go with the container's last process.
 */
#ifndef NODESCOPE_TCP_PROXIED_H
#define NODESCOPE_TCP_PROXIED_H

#include <stddef.h>
#include <stdint.h>

struct metric_registry;
struct ns_port_ranges;
struct proc_table;
struct containers_port;
struct tcp_proxied;

/* ephemeral: the ports left out (--ephemeral-port-range); it outlives p. */
int tcp_proxied_new(struct metric_registry *r, struct proc_table *procs,
		    const struct ns_port_ranges *ephemeral, unsigned max_series,
		    struct tcp_proxied **out);
void tcp_proxied_free(struct tcp_proxied *p);

/* A container named with its published ports (containers_ports_fn; ctx is the tcp_proxied). */
void tcp_proxied_set(void *ctx, const char *container_id, const struct containers_port *ports,
		     size_t n);

#endif
