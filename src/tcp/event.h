/* Checking tcp stream records. Pure. */
#ifndef NODESCOPE_TCP_EVENT_H
#define NODESCOPE_TCP_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "conn_table.h"
#include "events.h"

/* Returns 0, or -EINVAL for a record of the wrong size, type or family. */
int tcp_event_check(const void *data, size_t len);
const char *tcp_event_type_name(enum ns_tcp_event_type t);
/* "refused", "timeout", "unreachable", ... or the errno's name. */
const char *tcp_error_name(int err);
void tcp_event_tuple(const struct ns_tcp_event *e, struct tcp_tuple *out);
/*
 * Turns a close event's kernel counters into payload bytes: the kernel's
 * count includes the SYN (on the side that connected) and each FIN.
 */
void tcp_event_payload_bytes(struct ns_tcp_event *e, bool outbound);

#endif
