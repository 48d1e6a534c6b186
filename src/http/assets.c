#include "assets.h"

#include <string.h>

/* Each file's bytes between NAME and NAME_end (build/gen/web_assets.S). */
#define ASSET(sym)                                                                           \
	extern const unsigned char sym[];                                                      \
	extern const unsigned char sym##_end[];
ASSET(web_index_html)
ASSET(web_map_js)
ASSET(web_map_css)
ASSET(web_vendor_js)
#undef ASSET


static struct http_asset assets[] = {
	{ "/", "text/html; charset=utf-8", web_index_html, 0 },
	{ "/map.js", "text/javascript; charset=utf-8", web_map_js, 0 },
	{ "/map.css", "text/css; charset=utf-8", web_map_css, 0 },
	{ "/vendor.js", "text/javascript; charset=utf-8", web_vendor_js, 0 },
};
static const unsigned char *const ends[] = { web_index_html_end, web_map_js_end, web_map_css_end,
					     web_vendor_js_end };

const struct http_asset *http_asset_find(const char *path)
{
	for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++) {
		if (strcmp(assets[i].path, path))
			continue;
		assets[i].len = (size_t)(ends[i] - assets[i].data);
		return &assets[i];
	}
	return NULL;
}
