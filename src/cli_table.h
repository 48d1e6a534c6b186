/*
 * The options table: one row per option of nodescope. getopt's option array,
 * the --help text, the environment variables read and the error messages
 * are all made from it, so an option is added by adding its row.
 */
#ifndef NODESCOPE_CLI_TABLE_H
#define NODESCOPE_CLI_TABLE_H

#include <stddef.h>

#include "cli.h"
#include "util/strbuf.h"

enum cli_kind {
	CLI_HEADING,	/* not an option: the title of the rows after it in --help */
	CLI_FLAG,	/* no value: stores .min into a bool; the default is its opposite unless
			 * .def says; --no-NAME (as Coroot's kingpin) stores !.min */
	CLI_INT,	/* an integer in .min...max, stored by the field's size */
	CLI_SECONDS,	/* a duration (cli_parse_seconds) in .min...max seconds */
	CLI_MILLIS,	/* a duration (cli_parse_millis) in .min...max milliseconds */
	CLI_STRING,	/* any text, stored as given; "" stores NULL (not given) */
	CLI_CUSTOM,	/* .parse */
	CLI_HELP,	/* print --help and stop */
	CLI_VERSION,	/* print the version and stop */
};

enum cli_opt_flags {
	CLI_HIDDEN = 1 << 0,	/* left out of --help (tests and benches) */
	CLI_ENV_EMPTY = 1 << 1, /* an empty variable is a value; otherwise it counts as unset */
	/*
	 * Coroot's, accepted and its value checked, but what it asks for is not
	 * done yet: given (flag or variable), it warns once at start. No field.
	 */
	CLI_NOT_IMPLEMENTED = 1 << 2,
	/*
	 * Given several times, each value adds to the list (a struct with n): the
	 * first given replaces the default. .parse splits a value into items (most
	 * rows at blanks and newlines, the regex lists at newlines only), so the
	 * variable holds several, newline-separated as Kubernetes passes them.
	 */
	CLI_REPEATABLE = 1 << 3,
};

/*
 * Parses val into the field. On error returns -EINVAL and may say why in
 * why (else the row's .form is used).
 */
typedef int cli_parse_fn(const char *val, void *field, struct strbuf *why);

struct cli_opt {
	enum cli_kind kind;
	const char *name;	/* long name without "--"; the heading's title */
	char short_name;	/* one-letter alias, or 0 */
	const char *env;	/* its environment variable (NULL: none) */
	const char *metavar;	/* the value's name in --help ("N", "HOST:PORT") */
	size_t off, size;	/* the field in struct ns_config (size 0: none) */
	long long min, max;	/* CLI_INT, CLI_SECONDS, CLI_MILLIS: bounds; CLI_FLAG: min is the value */
	const char *def;	/* default, parsed like a given value (NULL: zero) */
	cli_parse_fn *parse;	/* CLI_CUSTOM */
	const char *form;	/* CLI_CUSTOM: what is accepted, for messages and --help */
	/* Writes the default for --help when it is not .def (derived from other tables). */
	void (*describe_default)(struct strbuf *sb);
	const char *help;	/* one sentence; --help wraps it */
	unsigned flags;		/* enum cli_opt_flags */
};

#define CLI_OPTS_MAX 128
extern const struct cli_opt cli_opts[];
extern const size_t cli_opts_count;

/* The row of a long name; NULL if none. */
const struct cli_opt *cli_opt_find(const char *name);
/* What the row accepts, as error messages and --help say it ("1..16777216"). */
void cli_opt_form(const struct cli_opt *o, struct strbuf *sb);
/* ms as Go writes a duration, shortest: "500ms", "15s", "1m30s", "24h". */
void cli_format_millis(long long ms, struct strbuf *sb);

#endif
