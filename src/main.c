/* nodescope: flags, then the agent. */
#include <stdio.h>

#include "agent.h"
#include "cli.h"
#include "exit_codes.h"

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
	strbuf_free(&msg);
	return agent_run(&cfg);
}
