#ifndef NODESCOPE_HTTP_PAGE_H
#define NODESCOPE_HTTP_PAGE_H
/* The embedded web page: live processes by container, and the agent's own health. */
extern const char http_page_html[];
#endif
