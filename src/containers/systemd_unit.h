/*
 * What Coroot's container_info asks systemd about a service (its Type and
 * the first unit in TriggeredBy), read from the unit files instead of over
 * systemd's private D-Bus socket: no connection to keep, nothing that can
 * hang the loop, and the same answer for a unit that systemd loaded from
 * those files. Drop-ins (<unit>.d/<name>.conf) override the unit file, as in
 * systemd; the parse is pure, the reader looks below a root.
 */
#ifndef NODESCOPE_CONTAINERS_SYSTEMD_UNIT_H
#define NODESCOPE_CONTAINERS_SYSTEMD_UNIT_H

#include <stdbool.h>
#include <stddef.h>

struct containers_systemd {
	char type[32];		/* "simple", "oneshot", "dbus", ... */
	char triggered_by[256]; /* "x.timer", "x.socket", "x.path", or "" */
};

/*
 * The last value of key in section [section] of a unit file's text, into
 * out. 1 when found, 0 when not. Comments, continuation lines and other
 * sections are skipped; an empty assignment ("Type=") resets to not found.
 */
int containers_unit_value(const char *text, const char *section, const char *key, char *out,
			  size_t outlen);

/*
 * Type and TriggeredBy of service (e.g. "nginx.service") from the unit
 * directories below root ("" for /): /etc/systemd/system, /run/systemd/system,
 * /usr/lib/systemd/system, /lib/systemd/system, the first that has it. Type
 * defaults as systemd's does ("dbus" with BusName=, else "simple"). Also
 * the transient and generated units' directories, in systemd's order. A
 * trigger is a .timer, .socket or .path unit of the same name, or one whose
 * Unit= names the service. 0, or -ENOENT when no unit file is found.
 */
int containers_systemd_read(const char *root, const char *service, struct containers_systemd *out);

/*
 * The unit a systemd container_id ("/system.slice/x.service") names, as
 * Coroot takes it: the first path element ending in ".service", else the
 * last element. "" when there is none.
 */
void containers_systemd_unit_of(const char *id, char *out, size_t outlen);

/*
 * Coroot's system services (IsSystemService), skipped by default
 * (--skip-systemd-system-services): Type oneshot or dbus, triggered by a
 * timer, or a unit whose name starts with one of systemd's, D-Bus's, a
 * getty's or a distribution's own daemons' prefixes. sd: what the unit files
 * say (empty when there are none). Pure.
 */
bool containers_systemd_system_service(const char *unit, const struct containers_systemd *sd);

#endif
