#include "net.h"

#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "netlink.h"
#include "util/netns.h"

/* Coroot's pattern, a prefix match (no end anchor), \d spelled [0-9]. */
static regex_t name_re;
static int name_re_ok;
static pthread_once_t name_re_once = PTHREAD_ONCE_INIT;

static void name_re_compile(void)
{
	name_re_ok = !regcomp(&name_re,
			      "^(en(p[0-9]+)?p[0-9]+s[0-9]+(f[0-9]+)?|eth[0-9]+|eno[0-9]+|ens[0-9]+|"
			      "em[0-9]+|bond[0-9]+|p[0-9]+p[0-9]+|enx[0-9a-f]+|br[0-9]+|vmbr[0-9]+)",
			      REG_EXTENDED | REG_NOSUB);
}

bool node_net_name_kept(const char *name)
{
	char lower[64];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(lower); i++)
		lower[i] = (char)tolower((unsigned char)name[i]);
	lower[i] = '\0';
	pthread_once(&name_re_once, name_re_compile);
	return name_re_ok && !regexec(&name_re, lower, 0, NULL, 0);
}

bool node_net_ip_kept(int family, const uint8_t *ip)
{
	if (family == AF_INET)
		return !(ip[0] == 169 && ip[1] == 254) && (ip[0] & 0xf0) != 0xe0;
	if (family == AF_INET6)
		return !(ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80) && ip[0] != 0xff;
	return false;
}

int node_net_host_socket(void)
{
	return netns_host_socket(node_netlink_open, "node_net_* show");
}
