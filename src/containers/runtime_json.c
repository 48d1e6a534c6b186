#include "containers/runtime_json.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "util/last_error.h"

LAST_ERROR_DEFINE(containers_json)

/* CRI annotation -> the label Coroot reads (declarations as data). */
static const struct {
	const char *annotation, *label;
} cri_names[] = {
	{ "io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name" },
	{ "io.kubernetes.cri.sandbox-namespace", "io.kubernetes.pod.namespace" },
	{ "io.kubernetes.cri.container-name", "io.kubernetes.container.name" },
};

/* Annotations naming the image, first present wins. */
static const char *const image_annotations[] = {
	"io.kubernetes.cri.image-name",	 /* containerd */
	"io.kubernetes.cri-o.ImageName", /* CRI-O */
};

#define CRIO_LABELS "io.kubernetes.cri-o.Labels"

/* Parses buf as JSON; -EINVAL with jansson's line/column on failure. */
static int load(const char *what, const char *buf, size_t len, json_t **root)
{
	json_error_t err;

	/* jansson rejects "\u0000" in strings unless asked: our strings stay C strings */
	*root = json_loadb(buf, len, 0, &err);
	if (!*root)
		return fail(-EINVAL, "%s: not JSON: line %d column %d: %s", what, err.line,
			    err.column, err.text);
	return 0;
}

/* A label or variable that does not fit is skipped: only memory is an error. */
static int keep(int rc)
{
	return rc == -ENOMEM ? fail(rc, "out of memory") : 0;
}

/* Every string member of obj as a label; "set if absent" when !replace. */
static int labels_from(json_t *obj, struct containers_meta *out, int replace)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return 0;
	json_object_foreach(obj, key, v) {
		if (!json_is_string(v) || (!replace && containers_meta_label(out, key)))
			continue;
		int rc = keep(containers_meta_set_label(out, key, json_string_value(v)));
		if (rc)
			return rc;
	}
	return 0;
}

/* The NOMAD_* entries of an ["K=V", ...] array. */
static int env_from(json_t *arr, struct containers_meta *out)
{
	size_t i;
	json_t *v;

	if (!json_is_array(arr))
		return 0;
	json_array_foreach(arr, i, v) {
		const char *s = json_string_value(v), *eq = s ? strchr(s, '=') : NULL;
		if (!eq || strncmp(s, "NOMAD_", 6) || eq - s > 256)
			continue;
		char key[257];
		memcpy(key, s, eq - s);
		key[eq - s] = '\0';
		int rc = keep(containers_meta_set_env(out, key, eq + 1));
		if (rc)
			return rc;
	}
	return 0;
}

static int set_string(char **field, json_t *v)
{
	if (!json_is_string(v))
		return 0;
	return containers_meta_set_string(field, json_string_value(v)) ? fail(-ENOMEM, "out of memory") : 0;
}

/*
 * The TCP host bindings of a Docker port map, {"80/tcp": [{"HostIp": "...",
 * "HostPort": "..."}], ...} (NetworkSettings.Ports or HostConfig.PortBindings),
 * as Coroot takes them: tcp ones only; a binding that does not parse is skipped.
 */
static int ports_from(json_t *map, struct containers_meta *out)
{
	const char *key;
	json_t *bindings;

	if (!json_is_object(map))
		return 0;
	json_object_foreach(map, key, bindings) {
		const char *slash = strchr(key, '/');
		size_t i;
		json_t *b;
		if (slash && strcmp(slash, "/tcp"))
			continue; /* "53/udp"; no proto means tcp */
		if (!json_is_array(bindings))
			continue;
		json_array_foreach(bindings, i, b) {
			const char *ip = json_string_value(json_object_get(b, "HostIp"));
			const char *port = json_string_value(json_object_get(b, "HostPort"));
			if (!port)
				continue;
			int rc = containers_meta_add_port(out, ip ? ip : "", port);
			if (rc == -ENOMEM)
				return fail(rc, "out of memory");
			if (rc == -EINVAL && strspn(port, "0123456789-") == strlen(port))
				out->ports_pending = true; /* "" or "8000-8010": Docker's pick */
		}
	}
	return 0;
}

int containers_parse_docker_hostconfig(const char *buf, size_t len, struct containers_meta *out)
{
	json_t *root;
	int rc = load("docker hostconfig.json", buf, len, &root);

	if (rc)
		return rc;
	if (!json_is_object(root))
		rc = fail(-EINVAL, "docker hostconfig.json: not a JSON object");
	else if (!out->ports_final) /* the running container's own bindings, when known, win */
		rc = ports_from(json_object_get(root, "PortBindings"), out);
	json_decref(root);
	return rc;
}

int containers_parse_docker_config(const char *buf, size_t len, struct containers_meta *out)
{
	json_t *root;
	int rc = load("docker config.v2.json", buf, len, &root);

	if (rc)
		return rc;
	if (!json_is_object(root)) {
		rc = fail(-EINVAL, "docker config.v2.json: not a JSON object");
		goto done;
	}
	json_t *name = json_object_get(root, "Name"), *config = json_object_get(root, "Config");
	json_t *ports = json_object_get(json_object_get(root, "NetworkSettings"), "Ports");
	if (json_is_string(name)) {
		const char *s = json_string_value(name);
		if (containers_meta_set_string(&out->name, s + (*s == '/'))) {
			rc = fail(-ENOMEM, "out of memory");
			goto done;
		}
	}
	if (!json_is_object(config)) {
		rc = fail(-EINVAL, "docker config.v2.json: no Config object");
		goto done;
	}
	if ((rc = set_string(&out->image, json_object_get(config, "Image"))) ||
	    (rc = labels_from(json_object_get(config, "Labels"), out, 1)) ||
	    (rc = env_from(json_object_get(config, "Env"), out)) ||
	    (rc = ports_from(ports, out)))
		goto done;
	out->ports_final = json_is_object(ports);
done:
	json_decref(root);
	return rc;
}

int containers_parse_oci_config(const char *buf, size_t len, struct containers_meta *out)
{
	json_t *root;
	int rc = load("OCI config.json", buf, len, &root);

	if (rc)
		return rc;
	if (!json_is_object(root) || !json_is_string(json_object_get(root, "ociVersion"))) {
		rc = fail(-EINVAL, "OCI config.json: not an OCI runtime spec (no ociVersion)");
		goto done;
	}
	json_t *ann = json_object_get(root, "annotations");
	if ((rc = labels_from(ann, out, 1)))
		goto done;

	/* CRI-O: the pod's labels as one JSON string */
	json_t *crio = json_object_get(ann, CRIO_LABELS);
	if (json_is_string(crio)) {
		json_t *labels = json_loads(json_string_value(crio), 0, NULL);
		rc = labels_from(labels, out, 0);
		json_decref(labels);
		if (rc)
			goto done;
	}
	for (size_t i = 0; i < sizeof(cri_names) / sizeof(cri_names[0]); i++) {
		const char *v = containers_meta_label(out, cri_names[i].annotation);
		if (v && !containers_meta_label(out, cri_names[i].label) &&
		    (rc = keep(containers_meta_set_label(out, cri_names[i].label, v))))
			goto done;
	}
	for (size_t i = 0; !out->image && i < sizeof(image_annotations) / sizeof(image_annotations[0]); i++)
		if ((rc = set_string(&out->image, json_object_get(ann, image_annotations[i]))))
			goto done;
	rc = env_from(json_object_get(json_object_get(root, "process"), "env"), out);
done:
	json_decref(root);
	return rc;
}

int containers_parse_storage_index(const char *buf, size_t len, const char *id,
				   struct containers_meta *out)
{
	json_t *root, *entry = NULL, *v;
	size_t i;
	int rc = load("containers.json", buf, len, &root);

	if (rc)
		return rc;
	if (!json_is_array(root)) {
		rc = fail(-EINVAL, "containers.json: not a JSON array");
		goto done;
	}
	json_array_foreach(root, i, v) {
		const char *eid = json_string_value(json_object_get(v, "id"));
		if (eid && !strcmp(eid, id)) {
			entry = v;
			break;
		}
	}
	if (!entry) {
		rc = fail(-ENOENT, "containers.json: no container %.64s", id);
		goto done;
	}
	if ((rc = set_string(&out->name, json_array_get(json_object_get(entry, "names"), 0))))
		goto done;
	/* metadata is a JSON object inside a string; an odd one only costs the image */
	json_t *md = json_loads(json_string_value(json_object_get(entry, "metadata")) ?: "", 0, NULL);
	rc = set_string(&out->image, json_object_get(md, "image-name"));
	json_decref(md);
done:
	json_decref(root);
	return rc;
}
