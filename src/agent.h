/* The agent: wires probes, streams, trackers, metrics and HTTP into one loop. */
#ifndef NODESCOPE_AGENT_H
#define NODESCOPE_AGENT_H

#include "cli.h"

/* Runs until SIGINT/SIGTERM; returns an enum ns_exit code. */
int agent_run(const struct ns_config *c);

#endif
