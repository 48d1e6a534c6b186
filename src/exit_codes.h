/* nodescope's exit codes, documented in the README. */
#ifndef NODESCOPE_EXIT_CODES_H
#define NODESCOPE_EXIT_CODES_H

enum ns_exit {
	NS_EXIT_OK = 0,		/* clean shutdown (SIGINT/SIGTERM) */
	NS_EXIT_RUNTIME = 1,	/* failure while running (out of memory, epoll error, ...) */
	NS_EXIT_USAGE = 2,	/* bad command line */
	NS_EXIT_PRIVILEGE = 3,	/* not root / missing capabilities */
	NS_EXIT_KERNEL = 4,	/* kernel lacks something needed (BTF, tracefs) */
	NS_EXIT_ATTACH = 5,	/* a BPF program failed to load or attach */
	NS_EXIT_LISTEN = 6,	/* cannot listen on the HTTP address */
};

#endif
