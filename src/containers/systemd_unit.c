#include "systemd_unit.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/file.h"

#define UNIT_TEXT_MAX 65536

/* Where systemd looks for units, highest priority first (systemd.unit(5)). */
static const char *const unit_dirs[] = {
	"/run/systemd/transient",  "/run/systemd/generator.early", "/etc/systemd/system",
	"/run/systemd/system",	   "/run/systemd/generator",	   "/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system", "/lib/systemd/system",	   "/run/systemd/generator.late",
};

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

int containers_unit_value(const char *text, const char *section, const char *key, char *out,
			  size_t outlen)
{
	bool in_section = false, found = false;
	size_t klen = strlen(key), slen = strlen(section);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *p = skip_space(line);
		bool continued = len && line[len - 1] == '\\';

		if (*p == '[') {
			in_section = !strncmp(p + 1, section, slen) && p[1 + slen] == ']';
		} else if (in_section && *p != '#' && *p != ';' && !strncmp(p, key, klen)) {
			const char *v = skip_space(p + klen);
			if (*v == '=') {
				v = skip_space(v + 1);
				size_t vlen = (size_t)(line + len - v);
				while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t' || v[vlen - 1] == '\r'))
					vlen--;
				if (vlen >= outlen)
					vlen = outlen - 1;
				memcpy(out, v, vlen);
				out[vlen] = '\0';
				found = vlen > 0; /* "Key=" resets it */
			}
		}
		line = end ? end + 1 : NULL;
		/* A continued line's next line belongs to the same assignment: not a key. */
		while (continued && line && *line) {
			end = strchr(line, '\n');
			len = end ? (size_t)(end - line) : strlen(line);
			continued = len && line[len - 1] == '\\';
			line = end ? end + 1 : NULL;
		}
	}
	return found;
}

/* key in the unit file of name below root, then in its drop-ins in name order (the last wins). */
static bool unit_value(const char *root, const char *name, const char *section, const char *key,
		       char *out, size_t outlen)
{
	char path[512];
	bool found = false;
	char *text = malloc(UNIT_TEXT_MAX);

	if (!text)
		return false;

	for (size_t i = 0; i < sizeof(unit_dirs) / sizeof(unit_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/%s", root, unit_dirs[i], name);
		if (file_read_small(path, text, UNIT_TEXT_MAX) > 0) {
			found = containers_unit_value(text, section, key, out, outlen) || found;
			break; /* the first directory that has the unit file is the one systemd uses */
		}
	}
	for (size_t i = 0; i < sizeof(unit_dirs) / sizeof(unit_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/%s.d", root, unit_dirs[i], name);
		struct dirent **list;
		int n = scandir(path, &list, NULL, alphasort);
		for (int j = 0; j < n; j++) {
			const char *f = list[j]->d_name;
			size_t fl = strlen(f);
			if (fl > 5 && !strcmp(f + fl - 5, ".conf")) {
				snprintf(path, sizeof(path), "%s%s/%s.d/%s", root, unit_dirs[i], name, f);
				if (file_read_small(path, text, UNIT_TEXT_MAX) > 0 &&
				    containers_unit_value(text, section, key, out, outlen))
					found = true;
			}
			free(list[j]);
		}
		if (n >= 0)
			free(list);
	}
	free(text);
	return found;
}

static bool unit_exists(const char *root, const char *name)
{
	char path[512];
	for (size_t i = 0; i < sizeof(unit_dirs) / sizeof(unit_dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s/%s", root, unit_dirs[i], name);
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

struct trigger_scan {
	const char *root, *service;
	char *out;
	size_t outlen;
};

/* A .timer/.socket/.path unit in dir whose Unit= is the service. */
static bool scan_dir(const struct trigger_scan *s, const char *dir)
{
	char path[512], unit[256];
	snprintf(path, sizeof(path), "%s%s", s->root, dir);
	DIR *d = opendir(path);
	if (!d)
		return false;
	bool found = false;
	for (struct dirent *e; !found && (e = readdir(d));) {
		const char *dot = strrchr(e->d_name, '.');
		if (!dot || (strcmp(dot, ".timer") && strcmp(dot, ".socket") && strcmp(dot, ".path")))
			continue;
		char section[16];
		snprintf(section, sizeof(section), "%c%s", dot[1] - 32, dot + 2); /* "Timer" ... */
		if (unit_value(s->root, e->d_name, section, "Unit", unit, sizeof(unit)) &&
		    !strcmp(unit, s->service)) {
			snprintf(s->out, s->outlen, "%s", e->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

int containers_systemd_read(const char *root, const char *service, struct containers_systemd *out)
{
	char busname[256];
	const char *dot = strrchr(service, '.');

	memset(out, 0, sizeof(*out));
	if (!dot || strcmp(dot, ".service") || !unit_exists(root, service))
		return -ENOENT;
	if (!unit_value(root, service, "Service", "Type", out->type, sizeof(out->type)))
		snprintf(out->type, sizeof(out->type), "%s",
			 unit_value(root, service, "Service", "BusName", busname, sizeof(busname))
				 ? "dbus" : "simple");

	/* By default x.timer, x.socket and x.path trigger x.service. */
	static const char *const kinds[] = { ".timer", ".socket", ".path" };
	size_t base = (size_t)(dot - service);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char name[256], unit[256];
		snprintf(name, sizeof(name), "%.*s%s", (int)base, service, kinds[i]);
		if (!unit_exists(root, name))
			continue;
		char section[16];
		snprintf(section, sizeof(section), "%c%s", kinds[i][1] - 32, kinds[i] + 2);
		/* ... unless it names another unit */
		if (unit_value(root, name, section, "Unit", unit, sizeof(unit)) && strcmp(unit, service))
			continue;
		snprintf(out->triggered_by, sizeof(out->triggered_by), "%s", name);
		return 0;
	}
	struct trigger_scan s = { root, service, out->triggered_by, sizeof(out->triggered_by) };
	for (size_t i = 0; i < sizeof(unit_dirs) / sizeof(unit_dirs[0]); i++)
		if (scan_dir(&s, unit_dirs[i]))
			break;
	return 0;
}

void containers_systemd_unit_of(const char *id, char *out, size_t outlen)
{
	out[0] = '\0';
	for (const char *p = id; *p; p += strcspn(p, "/")) {
		p += strspn(p, "/");
		size_t len = strcspn(p, "/");
		if (!len)
			break;
		snprintf(out, outlen, "%.*s", (int)len, p);
		if (len > 8 && !strncmp(p + len - 8, ".service", 8))
			break;
	}
}

/* Coroot's list (containers/systemd.go, systemServicePrefixes). */
static const char *const system_service_prefixes[] = {
	"systemd-",	      "dbus",	       "getty",		    "system-serial",
	"system-getty",	      "serial-getty",  "snapd",		    "packagekit",
	"unattended-upgrades", "multipathd",   "qemu-guest-agent", "irqbalance",
	"networkd-dispatcher", "rpcbind",
};

bool containers_systemd_system_service(const char *unit, const struct containers_systemd *sd)
{
	size_t tl = strlen(sd->triggered_by);

	if (!strcmp(sd->type, "oneshot") || !strcmp(sd->type, "dbus"))
		return true;
	if (tl >= 6 && !strcmp(sd->triggered_by + tl - 6, ".timer"))
		return true;
	for (size_t i = 0; i < sizeof(system_service_prefixes) / sizeof(system_service_prefixes[0]); i++)
		if (!strncmp(unit, system_service_prefixes[i], strlen(system_service_prefixes[i])))
			return true;
	return false;
}
