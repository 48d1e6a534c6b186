/*
 * The web page's files, embedded at build time (web/ and the graph library
 * npm fetched into build/web: Makefile, web_assets.S): the page loads
 * nothing from anywhere else.
 */
#ifndef NODESCOPE_HTTP_ASSETS_H
#define NODESCOPE_HTTP_ASSETS_H

#include <stddef.h>

struct http_asset {
	const char *path; /* as requested: "/", "/map.js", ... */
	const char *type;
	const unsigned char *data;
	size_t len;
};

/* The asset served at path, or NULL. */
const struct http_asset *http_asset_find(const char *path);

#endif
