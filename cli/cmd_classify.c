/*
 * cmd_classify.c - `cvc classify`: (re)label every kernel name of a
 * database with a rule set and print the time per class, or list the names
 * no rule matches (--unknown) so a user can write the missing rules.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "commands.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_report.h"

static const char synopsis[] =
	"[--db PATH] [--rules FILE | --rules-only FILE] [--unknown] [--run NAME] [--format table|csv|json]";

/* Where --unknown's rows go: straight out as CSV or JSON (a name can be a
 * megabyte of template; thousands of them are never held), or into the
 * table a person reads, each cut at 300 bytes as the report cuts them. */
struct unknown_out {
	const char *format;
	cvc_rep_table *t;
	int64_t rows;
};

#define UNKNOWN_CUT 300

static int add_unknown(void *arg, const char *name, int64_t count, int64_t total_ns)
{
	struct unknown_out *u = arg;
	char cut[UNKNOWN_CUT + 8], *safe;
	long r;

	u->rows++;
	if (strcmp(u->format, "json") == 0) { /* the JSON writer escapes them */
		fputs(u->rows == 1 ? "[\n{\"name\":" : ",\n{\"name\":", stdout);
		cvc_rep_json_string(stdout, name);
		printf(",\"count\":%lld,\"total_us\":%.3f}", (long long)count,
		       (double)total_ns / 1e3);
		return 0;
	}
	/* a trace's names reach a terminal: escapes and CR shown, not acted on */
	if (!(safe = cvc_text_safe_dup(name, strcmp(u->format, "csv") == 0)))
		return 1;
	if (strcmp(u->format, "csv") == 0) {
		cvc_csv_field(stdout, safe);
		printf(",%lld,%.3f\n", (long long)count, (double)total_ns / 1e3);
		free(safe);
		return 0;
	}
	snprintf(cut, sizeof cut, "%.*s%s", UNKNOWN_CUT, safe,
		 strlen(safe) > UNKNOWN_CUT ? "\xe2\x80\xa6" : "");
	free(safe);
	r = cvc_rep_table_add_row(u->t);
	if (r < 0 || cvc_rep_table_set_str(u->t, (size_t)r, 0, cut))
		return -1;
	cvc_rep_table_set_num(u->t, (size_t)r, 1, (double)count);
	cvc_rep_table_set_num(u->t, (size_t)r, 2, (double)total_ns / 1e3);
	return 0;
}

/* Time per class, largest first, then the total (table format only). */
static cvc_rep_table *summary_table(const cvc_class_total *t, int64_t all_ns, int total_row)
{
	static const char *const cols[] = {"class", "count", "total_us", "share_pct"};
	cvc_rep_table *out = cvc_rep_table_new("classes", NULL, 4, cols);
	int order[CVC_CLS_COUNT], n = 0;
	int64_t count = 0;

	for (int c = 0; c < CVC_CLS_COUNT; c++)
		if (t[c].count)
			order[n++] = c;
	/* by time, largest first: insertion sort over at most 19 classes */
	for (int i = 1; i < n; i++) {
		int k = order[i], j = i;

		while (j > 0 && t[order[j - 1]].total_ns < t[k].total_ns) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = k;
	}
	for (int i = 0; out && i <= n; i++) {
		const cvc_class_total *x = i < n ? &t[order[i]] : NULL;
		long r;

		if (!x && !total_row)
			break;
		r = cvc_rep_table_add_row(out);
		if (r < 0 || cvc_rep_table_set_str(out, (size_t)r, 0,
						   x ? cvc_class_name((cvc_op_class)order[i]) : "total")) {
			cvc_rep_table_free(out);
			return NULL;
		}
		count += x ? x->count : 0;
		cvc_rep_table_set_num(out, (size_t)r, 1, (double)(x ? x->count : count));
		cvc_rep_table_set_num(out, (size_t)r, 2, (double)(x ? x->total_ns : all_ns) / 1e3);
		cvc_rep_table_set_num(out, (size_t)r, 3,
				      all_ns > 0 ? 100.0 * (double)(x ? x->total_ns : all_ns) /
							   (double)all_ns
						 : 0.0);
	}
	return out;
}

int cmd_classify(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = CVC_DEFAULT_DB, *rules_path = NULL, *rules_only = NULL, *run = NULL;
	const char *format = "table";
	int unknown = 0, npos = 0, rc;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &dbpath, "PATH", "database (default " CVC_DEFAULT_DB ")", NULL},
		{"rules", 0, CLI_PATH, &rules_path, "FILE",
		 "rule file tried before the shipped rules (adds to them)", NULL},
		{"rules-only", 0, CLI_PATH, &rules_only, "FILE",
		 "rule file that replaces the shipped rules", NULL},
		{"unknown", 0, CLI_FLAG, &unknown, NULL,
		 "list kernel names no rule matches, by total time (changes nothing)", NULL},
		{"run", 0, CLI_STR, &run, "NAME", "only this run in the output", NULL},
		{"format", 'f', CLI_CHOICE, &format, "FMT", "output format", CLI_FORMATS},
		{0},
	};
	cvc_rules *rules = NULL;
	cvc_db *db = NULL;
	int64_t run_id = -1;
	cvc_rep_table *tab = NULL;
	cvc_status st;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos)
		return cli_error("%s: unexpected argument '%s' (see 'cvc %s --help')", ctx->cmd,
				 argv[1], ctx->cmd);
	/* rules first: a bad rule file must leave the database untouched */
	if ((rc = cli_rules_load(ctx->cmd, rules_path, rules_only, 1, &rules)))
		goto out;
	if ((rc = cli_db_open(ctx, dbpath, unknown ? CVC_DB_READONLY : 0, &db)))
		goto out;
	if (run) {
		st = cvc_db_run_find(db, run, &run_id);
		if (st == CVC_ERR_NOTFOUND) {
			rc = cli_fail(st, "'%s': no run named '%s'", dbpath, run);
			goto out;
		}
		if (st) {
			rc = cli_fail(st, "%s", cvc_db_errmsg(db));
			goto out;
		}
	}
	if (unknown) {
		static const char *const cols[] = {"name", "count", "total_us"};
		struct unknown_out u = {format, NULL, 0};

		if (!(tab = u.t = cvc_rep_table_new("unknown", NULL, 3, cols))) {
			rc = cli_fail(CVC_ERR_NOMEM, "%s: out of memory", ctx->cmd);
			goto out;
		}
		if (strcmp(format, "csv") == 0)
			puts("name,count,total_us");
		st = cvc_classify_unknown(db, rules, run_id, add_unknown, &u);
		if (st) {
			rc = cli_fail(st, "%s", cvc_db_errmsg(db));
			goto out;
		}
		if (strcmp(format, "json") == 0)
			fputs(u.rows ? "\n]\n" : "[]\n", stdout);
		else if (strcmp(format, "table") == 0)
			cli_table_print(tab, format);
		rc = 0;
		goto out;
	}
	if ((st = cvc_db_begin(db)) || (st = cvc_classify_db(db, rules, 1)) ||
	    (st = cvc_db_commit(db))) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		cvc_db_rollback(db);
		goto out;
	}
	{
		cvc_class_total t[CVC_CLS_COUNT];
		int64_t all_ns = 0;

		if ((st = cvc_classify_summary(db, run_id, t, &all_ns))) {
			rc = cli_fail(st, "%s", cvc_db_errmsg(db));
			goto out;
		}
		/* a script sums the classes itself: the total row is the table's */
		if (!(tab = summary_table(t, all_ns, strcmp(format, "table") == 0))) {
			rc = cli_fail(CVC_ERR_NOMEM, "%s: out of memory", ctx->cmd);
			goto out;
		}
		cli_table_print(tab, format);
	}
	rc = 0;
out:
	cvc_rep_table_free(tab);
	cvc_rules_free(rules);
	return rc;
}
