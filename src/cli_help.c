/* The --help text, made from the options table: grouped by its headings, aligned, wrapped. */
#include <string.h>

#include "cli_table.h"

#define HELP_WIDTH 80
#define HELP_INDENT 2
#define HELP_MAX_LEFT 28 /* a longer "--name VALUE" puts its text on the next line */

static const char usage_head[] =
	"usage: nodescope [run] [options]    the agent: /metrics and a web page over HTTP\n"
	"       nodescope trace [options]    print events as JSON lines on stdout\n"
	"\n"
	"Each option can also be set by the environment variable under it; the command\n"
	"line wins over the environment. A variable set to \"\" counts as unset, except\n"
	"LISTEN=\"\", which turns HTTP off as --listen \"\" does. Options without a value\n"
	"take 1, 0, t, f, true, false, yes or no from their variable, and --no-NAME\n"
	"undoes --NAME. Times are seconds (90), or Go's form: 500ms, 1.5s, 1m30s, 2h.\n";

static const char usage_tail[] =
	"\n"
	"exit codes: 0 clean stop, 1 runtime error, 2 usage, 3 privileges, 4 kernel lacks\n"
	"a feature, 5 a probe failed to load or attach, 6 cannot listen\n";

static void left_column(const struct cli_opt *o, struct strbuf *sb)
{
	if (o->short_name)
		strbuf_printf(sb, "-%c, ", o->short_name);
	strbuf_printf(sb, "--%s", o->name);
	if (o->metavar)
		strbuf_printf(sb, " %s", o->metavar);
}

static bool shown(const struct cli_opt *o)
{
	return o->kind != CLI_HEADING && !(o->flags & CLI_HIDDEN);
}

/* text word-wrapped into the right column, which starts at column col */
static void wrap(struct strbuf *out, const char *text, size_t col)
{
	size_t at = col;

	for (const char *p = text; *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (!n)
			break;
		if (at > col && at + 1 + n > HELP_WIDTH) {
			strbuf_printf(out, "\n%*s", (int)col, "");
			at = col;
		}
		if (at > col)
			strbuf_putc(out, ' '), at++;
		strbuf_append(out, p, n);
		at += n;
		p += n;
	}
	strbuf_putc(out, '\n');
}

/* The row's help sentence, then what it accepts and its default when --help can say them. */
static void help_text(const struct cli_opt *o, struct strbuf *sb)
{
	strbuf_puts(sb, o->help);
	if (o->kind == CLI_INT)
		strbuf_printf(sb, " (%lld..%lld", o->min, o->max);
	else if (o->kind == CLI_SECONDS)
		strbuf_printf(sb, " (%lld..%lld s", o->min, o->max);
	else if (o->kind == CLI_MILLIS) {
		strbuf_puts(sb, " (");
		cli_format_millis(o->min, sb);
		strbuf_puts(sb, "..");
		cli_format_millis(o->max, sb);
	}
	else if (o->def || o->describe_default)
		strbuf_puts(sb, " (");
	else
		return;
	if (o->def || o->describe_default)
		strbuf_puts(sb, o->kind == CLI_INT || o->kind == CLI_SECONDS || o->kind == CLI_MILLIS
					? ", default "
					: "default ");
	if (o->describe_default)
		o->describe_default(sb);
	else if (o->def)
		strbuf_puts(sb, o->def);
	strbuf_putc(sb, ')');
}

void cli_help(struct strbuf *out)
{
	struct strbuf left = STRBUF_INIT, text = STRBUF_INIT;
	size_t width = 0;

	for (size_t i = 0; i < cli_opts_count; i++) {
		if (!shown(&cli_opts[i]))
			continue;
		strbuf_reset(&left);
		left_column(&cli_opts[i], &left);
		if (left.len <= HELP_MAX_LEFT && left.len > width)
			width = left.len;
	}
	size_t col = HELP_INDENT + width + 2;

	strbuf_puts(out, usage_head);
	for (size_t i = 0; i < cli_opts_count; i++) {
		const struct cli_opt *o = &cli_opts[i];
		if (o->kind == CLI_HEADING) {
			strbuf_printf(out, "\n%s:\n", o->name);
			continue;
		}
		if (!shown(o))
			continue;
		strbuf_reset(&left);
		left_column(o, &left);
		strbuf_printf(out, "%*s%s", HELP_INDENT, "", strbuf_str(&left));
		if (left.len > width)
			strbuf_printf(out, "\n%*s", (int)col, "");
		else
			strbuf_printf(out, "%*s", (int)(col - HELP_INDENT - left.len), "");
		strbuf_reset(&text);
		help_text(o, &text);
		wrap(out, strbuf_str(&text), col);
		if (o->env)
			strbuf_printf(out, "%*senv %s\n", (int)col, "", o->env);
	}
	strbuf_puts(out, usage_tail);
	strbuf_free(&left);
	strbuf_free(&text);
}
