/*
 * nodescope [run|trace] [options]: the command line, then the environment,
 * then the defaults, every option as its row of cli_opts says.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_table.h"
#include "version.h"

static const char usage_short[] =
	"usage: nodescope [run|trace] [options]; nodescope --help lists the options\n";

/* Where an option's value came from; the first that has one wins. */
enum cli_source { FROM_DEFAULT, FROM_FLAG, FROM_ENV, FROM_NEGATED /* --no-NAME */ };

const char *cli_environ(const char *name)
{
	return getenv(name);
}

/* v into an integer field of any width; in-range values of signed fields keep their bits. */
static void store_int(void *field, size_t size, long long v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;
	uint64_t u64 = (uint64_t)v;

	switch (size) {
	case 1:
		memcpy(field, &u8, 1);
		break;
	case 2:
		memcpy(field, &u16, 2);
		break;
	case 4:
		memcpy(field, &u32, 4);
		break;
	default:
		memcpy(field, &u64, 8);
		break;
	}
}

/* Parses val into the row's field of c; -EINVAL (and maybe the reason in why) if bad. */
static int apply(const struct cli_opt *o, const char *val, enum cli_source from,
		 struct ns_config *c, struct strbuf *why)
{
	/* A row without a field (CLI_NOT_IMPLEMENTED) still has its value checked. */
	union {
		long long ll;
		double d;
		void *p;
		char bytes[64];
	} scratch;
	void *field = o->size ? (void *)((char *)c + o->off) : (void *)&scratch;
	long long v;
	bool b;

	switch (o->kind) {
	case CLI_FLAG:
		/* a flag on the command line has no value; its variable says yes or no */
		if (from == FROM_FLAG)
			b = true;
		else if (cli_parse_bool(val, &b))
			return -EINVAL;
		*(bool *)field = b ? o->min : !o->min;
		return 0;
	case CLI_INT:
		if (cli_parse_int(val, o->min, o->max, &v))
			return -EINVAL;
		store_int(field, o->size, v);
		return 0;
	case CLI_SECONDS:
		if (cli_parse_seconds(val, o->min, o->max, &v))
			return -EINVAL;
		store_int(field, o->size, v);
		return 0;
	case CLI_MILLIS:
		if (cli_parse_millis(val, o->min, o->max, &v))
			return -EINVAL;
		store_int(field, o->size, v);
		return 0;
	case CLI_STRING:
		*(const char **)field = *val ? val : NULL;
		return 0;
	case CLI_CUSTOM:
		return o->parse(val, field, why);
	default:
		return -EINVAL;
	}
}

/* "--max-connections" or "NODESCOPE_MAX_CONNECTIONS", as the user gave it */
static const char *source_name(const struct cli_opt *o, enum cli_source from, char *buf, size_t n)
{
	if (from == FROM_ENV)
		return o->env;
	snprintf(buf, n, "--%s%s", from == FROM_NEGATED ? "no-" : "", o->name);
	return buf;
}

static void bad_value(struct strbuf *out, const struct cli_opt *o, enum cli_source from,
		      const char *val, struct strbuf *why)
{
	if (!why->len)
		cli_opt_form(o, why);
	if (from == FROM_ENV)
		strbuf_printf(out, "nodescope: bad %s='%s' (%s)\n", o->env, val, strbuf_str(why));
	else if (from == FROM_FLAG)
		strbuf_printf(out, "nodescope: bad --%s '%s' (%s)\n", o->name, val,
			      strbuf_str(why));
	else
		strbuf_printf(out, "nodescope: bug: default of --%s '%s' is bad (%s)\n", o->name,
			      val, strbuf_str(why));
}

/* Every field to its default: zero, the opposite of a flag, or the row's default parsed. */
static int apply_defaults(struct ns_config *c, struct strbuf *out)
{
	struct strbuf why = STRBUF_INIT;
	int err = 0;

	*c = (struct ns_config){
		.max_l7_connections = 16384, /* not an option */
	};
	for (size_t i = 0; i < cli_opts_count && !err; i++) {
		const struct cli_opt *o = &cli_opts[i];
		if (o->kind == CLI_FLAG && o->size && !o->def)
			*(bool *)((char *)c + o->off) = !o->min;
		else if (o->def && (err = apply(o, o->def, FROM_DEFAULT, c, &why)))
			bad_value(out, o, FROM_DEFAULT, o->def, &why);
	}
	strbuf_free(&why);
	return err;
}

static bool takes_value(const struct cli_opt *o)
{
	return o->kind != CLI_FLAG && o->kind != CLI_HELP && o->kind != CLI_VERSION;
}

/* getopt_long's val for a row's --no-NAME: past every row's own. */
#define NEGATED (256 + CLI_OPTS_MAX)

/* --NAME's --no-NAME, as Coroot's kingpin has for every flag without a value. */
static bool negatable(const struct cli_opt *o)
{
	return o->kind == CLI_FLAG && strncmp(o->name, "no-", 3);
}

/* "no-" and the name, kept for getopt (the table's names are few and short). */
static char negated_names[CLI_OPTS_MAX][64];

/* getopt_long's option array and short options from the table; val is 256 + row. */
static void getopt_tables(struct option *opts, char *shorts)
{
	size_t n = 0;

	*shorts++ = ':'; /* a missing value is ':', told from an unknown option */
	for (size_t i = 0; i < cli_opts_count; i++) {
		const struct cli_opt *o = &cli_opts[i];
		if (o->kind == CLI_HEADING)
			continue;
		opts[n++] =
			(struct option){ o->name, takes_value(o) ? required_argument : no_argument,
					 NULL, 256 + (int)i };
		if (negatable(o)) {
			snprintf(negated_names[i], sizeof(negated_names[i]), "no-%s", o->name);
			opts[n++] = (struct option){ negated_names[i], no_argument, NULL,
						     NEGATED + (int)i };
		}
		if (o->short_name) {
			*shorts++ = o->short_name;
			if (takes_value(o))
				*shorts++ = ':';
		}
	}
	opts[n] = (struct option){ 0 };
	*shorts = '\0';
}

static int short_row(int opt)
{
	for (size_t i = 0; i < cli_opts_count; i++)
		if (cli_opts[i].kind != CLI_HEADING && cli_opts[i].short_name == opt)
			return (int)i;
	return -1;
}

/* A repeatable row's first given value replaces the default: the list starts empty. */
static void start_list(const struct cli_opt *o, struct ns_config *c)
{
	if ((o->flags & CLI_REPEATABLE) && o->size)
		memset((char *)c + o->off, 0, o->size);
}

/*
 * The command line into c and from[]. Returns CLI_RUN to go on, or the
 * result to return (help, version, an error in out).
 */
static enum cli_result parse_argv(int argc, char **argv, struct ns_config *c, enum cli_source *from,
				  struct strbuf *out)
{
	struct option opts[2 * CLI_OPTS_MAX + 1];
	char shorts[2 * CLI_OPTS_MAX + 2];
	struct strbuf why = STRBUF_INIT;
	enum cli_result r = CLI_RUN;
	int opt;

	getopt_tables(opts, shorts);
	/*
	 * optind = 0 (not 1) makes getopt drop all its state from an earlier
	 * call (glibc keeps the permutation bounds and the position inside "-xy"
	 * otherwise); it then starts at index 1.
	 */
	optind = 0;
	opterr = 0;
	while (r == CLI_RUN && (opt = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		int row = opt >= NEGATED ? opt - NEGATED : opt >= 256 ? opt - 256 : short_row(opt);
		if (opt >= NEGATED) {
			/* the flag's default, as if not given; still given, for the warning */
			if (cli_opts[row].size)
				*(bool *)((char *)c + cli_opts[row].off) = !cli_opts[row].min;
			from[row] = FROM_NEGATED;
		} else if (opt == ':') {
			strbuf_printf(out, "nodescope: %s needs a value\n%s", argv[optind - 1],
				      usage_short);
			r = CLI_ERROR;
		} else if (row < 0) {
			/* A short one may sit inside "-xy", where optind has not moved on. */
			if (optopt >= NEGATED) /* "--no-verbose=1" */
				strbuf_printf(out, "nodescope: --no-%s takes no value\n%s",
					      cli_opts[optopt - NEGATED].name, usage_short);
			else if (optopt >= 256) /* "--verbose=1": a known one given a value */
				strbuf_printf(out, "nodescope: --%s takes no value\n%s",
					      cli_opts[optopt - 256].name, usage_short);
			else if (optopt > 0 && optopt < 256)
				strbuf_printf(out, "nodescope: unknown option '-%c'\n%s", optopt,
					      usage_short);
			else
				strbuf_printf(out, "nodescope: unknown option '%s'\n%s",
					      argv[optind - 1], usage_short);
			r = CLI_ERROR;
		} else if (cli_opts[row].kind == CLI_HELP) {
			cli_help(out);
			r = CLI_EXIT_OK;
		} else if (cli_opts[row].kind == CLI_VERSION) {
			strbuf_printf(out, "nodescope %s\n", nodescope_version);
			r = CLI_EXIT_OK;
		} else {
			if (from[row] == FROM_DEFAULT)
				start_list(&cli_opts[row], c);
			if (apply(&cli_opts[row], optarg, FROM_FLAG, c, &why)) {
				bad_value(out, &cli_opts[row], FROM_FLAG, optarg, &why);
				r = CLI_ERROR;
			}
			from[row] = FROM_FLAG;
		}
	}
	if (r == CLI_RUN && optind < argc) {
		strbuf_printf(out, "nodescope: unexpected argument '%s'\n%s", argv[optind],
			      usage_short);
		r = CLI_ERROR;
	}
	strbuf_free(&why);
	return r;
}

/* The variables of the options the command line did not give. */
static int parse_env(cli_getenv_fn *env, struct ns_config *c, enum cli_source *from,
		     struct strbuf *out)
{
	struct strbuf why = STRBUF_INIT;
	int err = 0;

	for (size_t i = 0; env && i < cli_opts_count && !err; i++) {
		const struct cli_opt *o = &cli_opts[i];
		if (!o->env || from[i] != FROM_DEFAULT)
			continue;
		const char *v = env(o->env);
		/* Set but empty counts as unset, as in Coroot (kingpin), unless the row says. */
		if (!v || (!*v && !(o->flags & CLI_ENV_EMPTY)))
			continue;
		start_list(o, c);
		if ((err = apply(o, v, FROM_ENV, c, &why)))
			bad_value(out, o, FROM_ENV, v, &why);
		from[i] = FROM_ENV;
	}
	strbuf_free(&why);
	return err;
}

static size_t row_of(const char *name)
{
	return (size_t)(cli_opt_find(name) - cli_opts);
}

enum cli_result cli_parse(int argc, char **argv, cli_getenv_fn *env, struct ns_config *c,
			  struct strbuf *out)
{
	enum cli_source from[CLI_OPTS_MAX] = { FROM_DEFAULT };
	char a[64], b[64];

	if (apply_defaults(c, out))
		return CLI_ERROR;
	/* The mode word, then getopt from there: given argv shifted to put it at index 0. */
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "trace")) {
		c->trace = true;
		first = 2;
	} else if (argc > 1 && !strcmp(argv[1], "run")) {
		first = 2;
	}
	enum cli_result r = parse_argv(argc - first + 1, argv + first - 1, c, from, out);
	if (r != CLI_RUN)
		return r;
	if (parse_env(env, c, from, out))
		return CLI_ERROR;

	size_t hold = row_of("hold-first-runs"), no_tls = row_of("no-tls");
	if (c->hold_first_runs && !c->tls) {
		strbuf_printf(out,
			      "nodescope: %s holds processes until their TLS probes are in place: "
			      "it needs TLS probing (drop %s)\n",
			      source_name(&cli_opts[hold], from[hold], a, sizeof(a)),
			      source_name(&cli_opts[no_tls], from[no_tls], b, sizeof(b)));
		return CLI_ERROR;
	}
	/* trace serves HTTP only when asked to */
	if (c->trace && from[row_of("listen")] == FROM_DEFAULT)
		c->listen = NULL;
	for (size_t i = 0; i < cli_opts_count; i++)
		if ((cli_opts[i].flags & CLI_NOT_IMPLEMENTED) && from[i] != FROM_DEFAULT)
			strbuf_printf(out, "%s: not implemented yet, ignored (Coroot's --%s: %s)\n",
				      source_name(&cli_opts[i], from[i], a, sizeof(a)),
				      cli_opts[i].name, cli_opts[i].help);
	return CLI_RUN;
}
