/*
 * opts.c - one option parser for every subcommand, driven by arrays of
 * struct cli_opt, so that --help is generated from the same data that
 * parses (git's parse-options, curl's tool_getparam).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_out.h"

/*
 * Writes the formatted text to stderr with control characters and
 * bidirectional overrides shown as escapes (cvc_text_safe), line breaks
 * kept: the messages quote file names, cells and flags from outside, and a
 * terminal must show those, not act on them (git's quote_path does the
 * same for names).  Falls back to the raw text when memory is short.
 */
static void vsay(const char *prefix, const char *fmt, va_list ap)
{
	va_list again;
	char small[512], *buf = small, *safe;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small && (buf = malloc((size_t)n + 1)))
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	va_end(again);
	if (n < 0 || !buf)
		buf = small;
	safe = cvc_text_safe_dup(buf, 1);
	fputs(prefix, stderr);
	fputs(safe ? safe : buf, stderr);
	free(safe);
	if (buf != small)
		free(buf);
}

void cli_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

/* Error lines said so far (cli_errors_said). */
static int errors_said;

int cli_errors_said(void)
{
	return errors_said;
}

/* "error: <message>" on stderr: the one shape of every error line. */
static void verror(const char *fmt, va_list ap)
{
	errors_said++;
	vsay("error: ", fmt, ap);
	fputc('\n', stderr);
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return 2;
}

int cli_fail(cvc_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return cvc_exit_code(st);
}

static void print_examples(FILE *f, const char *cmd)
{
	const char *ex = cli_cmd_examples(cmd);

	if (!ex || !*ex)
		return;
	fputs("\nexamples:\n", f);
	while (*ex) {
		size_t n = strcspn(ex, "\n");

		fprintf(f, "  %.*s\n", (int)n, ex);
		ex += n + (ex[n] == '\n');
	}
}

void cli_print_list(FILE *f, const char *list)
{
	size_t col = 0;

	while (*list) {
		size_t n = strcspn(list, ",");
		int more = list[n] == ',';

		if (col && col + n + 1 > 78) {
			fputc('\n', f);
			col = 0;
		}
		int w = fprintf(f, "%s%.*s%s", col ? " " : "  ", (int)n, list, more ? "," : "");

		col += w > 0 ? (size_t)w : 0;
		list += n + more;
	}
	if (col)
		fputc('\n', f);
}

void cli_usage(FILE *f, const char *cmd, const char *synopsis,
	       const struct cli_opt *opts)
{
	fprintf(f, "usage: cvc %s %s\n", cmd, synopsis ? synopsis : "");
	if (!opts || !opts->lname) {
		print_examples(f, cmd);
		return;
	}
	fputs("\noptions:\n", f);
	for (const struct cli_opt *o = opts; o->lname; o++) {
		char left[64];

		snprintf(left, sizeof left, "%s%c%s--%s%s%s", o->sname ? "-" : "",
			 o->sname ? o->sname : ' ', o->sname ? ", " : "  ", o->lname,
			 o->argname ? " " : "", o->argname ? o->argname : "");
		fprintf(f, "  %-28s %s", o->sname ? left : left + 1, o->help ? o->help : "");
		if (o->type == CLI_CHOICE && o->choices)
			fprintf(f, " (%s)", o->choices);
		fputc('\n', f);
	}
	print_examples(f, cmd);
}

int cli_usage_error(const char *cmd, const char *synopsis, const struct cli_opt *opts)
{
	cli_usage(stderr, cmd, synopsis, opts);
	return 2;
}

static int set_value(const char *cmd, const struct cli_opt *o, const char *v)
{
	char *end = NULL;

	switch (o->type) {
	case CLI_FLAG:
		*(int *)o->dest = 1;
		return 0;
	case CLI_PATH:
		if (cvc_out_input(v))
			return cli_error("out of memory");
		*(const char **)o->dest = v;
		return 0;
	case CLI_STR:
	case CLI_OUT:
		*(const char **)o->dest = v;
		return 0;
	case CLI_CHOICE:
		if (!cvc_str_in_list(o->choices, v))
			return cli_error("%s: --%s: '%s' is not one of %s", cmd,
					 o->lname, v, o->choices);
		*(const char **)o->dest = v;
		return 0;
	case CLI_INT: {
		long long x;

		errno = 0;
		x = strtoll(v, &end, 10);
		if (errno || end == v || *end)
			return cli_error("%s: --%s: expected an integer, got '%s'", cmd,
					 o->lname, v);
		*(long long *)o->dest = x;
		return 0;
	}
	case CLI_DOUBLE: {
		double x;

		errno = 0;
		x = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(x))
			return cli_error("%s: --%s: expected a number, got '%s'", cmd,
					 o->lname, v);
		*(double *)o->dest = x;
		return 0;
	}
	}
	return 2;
}

static const struct cli_opt *find_long(const struct cli_opt *opts, const char *name,
				       size_t len)
{
	for (const struct cli_opt *o = opts; o && o->lname; o++)
		if (strlen(o->lname) == len && strncmp(o->lname, name, len) == 0)
			return o;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
	for (const struct cli_opt *o = opts; o && o->lname; o++)
		if (o->sname == c)
			return o;
	return NULL;
}

int cli_parse(const char *cmd, const char *synopsis, const struct cli_opt *opts,
	      int argc, char **argv, int *npos, int *rest)
{
	return cli_parse_seen(cmd, synopsis, opts, argc, argv, npos, rest, NULL);
}

int cli_parse_seen(const char *cmd, const char *synopsis, const struct cli_opt *opts,
		   int argc, char **argv, int *npos, int *rest, uint64_t *seen)
{
	int np = 0, i;

	if (seen)
		*seen = 0;

	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		const struct cli_opt *o = NULL;
		const char *val = NULL;

		if (strcmp(a, "--") == 0) {
			i++;
			if (rest)
				break;
			for (; i < argc; i++) {
				if (cvc_out_input(argv[i]))
					return cli_error("out of memory");
				argv[1 + np++] = argv[i];
			}
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			cli_usage(stdout, cmd, synopsis, opts);
			return -1;
		}
		if (a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);

			o = find_long(opts, a + 2, len);
			if (!o)
				return cli_error("%s: unknown option '%s' (see 'cvc %s --help')",
						 cmd, a, cmd);
			if (eq) {
				if (o->type == CLI_FLAG)
					return cli_error("%s: --%s takes no value", cmd, o->lname);
				val = eq + 1;
			}
		} else if (a[0] == '-' && a[1] && a[1] != '-' ) {
			o = find_short(opts, a[1]);
			if (!o)
				return cli_error("%s: unknown option '%s' (see 'cvc %s --help')",
						 cmd, a, cmd);
			if (a[2]) {
				if (o->type == CLI_FLAG)
					return cli_error("%s: unknown option '%s'", cmd, a);
				val = a + 2;
			}
		} else {
			if (cvc_out_input(a))
				return cli_error("out of memory");
			argv[1 + np++] = a;
			continue;
		}
		if (o->type != CLI_FLAG && !val) {
			if (i + 1 >= argc)
				return cli_error("%s: --%s needs a value", cmd, o->lname);
			val = argv[++i];
			/* `--db --run X`: the value left out, the next option taken
			 * for it (a database file named '--run') */
			if (val[0] == '-' && val[1] == '-' &&
			    find_long(opts, val + 2, strcspn(val + 2, "=")))
				return cli_error("%s: --%s needs a value, got the option '%s'", cmd,
						 o->lname, val);
		}
		if (set_value(cmd, o, val))
			return 2;
		/* a default cannot tell "not given" from "given its default
		 * value": the command asks this instead */
		if (seen && o - opts < 64)
			*seen |= UINT64_C(1) << (o - opts);
	}
	if (rest)
		*rest = i;
	*npos = np;
	return 0;
}

int cli_parse_bytes(const char *opt, const char *s, long long *out)
{
	static const struct { const char *suf; double mul; } units[] = {
		{"", 1}, {"B", 1}, {"K", 1e3}, {"KB", 1e3}, {"KiB", 1024.0},
		{"M", 1e6}, {"MB", 1e6}, {"MiB", 1048576.0}, {"G", 1e9}, {"GB", 1e9},
		{"GiB", 1073741824.0}, {"T", 1e12}, {"TB", 1e12}, {"TiB", 1099511627776.0},
	};
	char *end = NULL;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return cli_error("--%s: expected a size like 64MiB, got '%s'", opt, s);
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].suf) == 0) {
			double b = v * units[i].mul;

			if (b > 9.0e18)
				return cli_error("--%s: size '%s' is too large", opt, s);
			/* 0.5 was rounded to 1 byte without a word; a decimal
			 * unit's product (0.7 KB: 700.0000000000001) is whole */
			if (fabs(b - round(b)) > 1e-9 * b + 1e-6)
				return cli_error("--%s: expected a whole number of bytes, got '%s' "
						 "(%.17g bytes)", opt, s, b);
			*out = (long long)llround(b);
			return 0;
		}
	}
	return cli_error("--%s: unknown size unit in '%s' (use B, KiB, MiB, GiB, KB, MB, GB)",
			 opt, s);
}

int cli_self_dir(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
	char *slash;

	if (n <= 0 || (size_t)n >= cap - 1)
		return -1;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

void cli_warn_suspects(cvc_db *db, int64_t run_id)
{
	char ex[160];
	double share = 0;

	if (cvc_classify_suspects(db, run_id, &share, ex, sizeof ex) == CVC_OK && share > 0.01)
		cli_say("warning: %.1f%% of the kernel time is in kernels no rule classes as "
			"communication but whose names look like it (e.g. '%s'): they count as "
			"compute; see 'cvc classify --unknown' and --rules\n", 100 * share, ex);
}
