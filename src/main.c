/* nodescope: flags, then the agent. */
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "cli.h"
#include "exit_codes.h"
#include "util/log.h"

int main(int argc, char **argv)
{
	struct ns_config cfg;
	struct strbuf msg = STRBUF_INIT;

	switch (cli_parse(argc, argv, cli_environ, &cfg, &msg)) {
	case CLI_EXIT_OK:
		fputs(strbuf_str(&msg), stdout);
		strbuf_free(&msg);
		return NS_EXIT_OK;
	case CLI_ERROR:
		fputs(strbuf_str(&msg), stderr);
		strbuf_free(&msg);
		return NS_EXIT_USAGE;
	case CLI_RUN:
		break;
	}
	log_rate_limit(cfg.log_per_second, cfg.log_burst);
	/* What the options say when they run: a warning a line (Coroot's not implemented). */
	for (const char *p = strbuf_str(&msg); *p;) {
		size_t n = strcspn(p, "\n");
		log_warn("%.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
	strbuf_free(&msg);
	return agent_run(&cfg);
}
