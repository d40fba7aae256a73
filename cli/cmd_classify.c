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

static const char synopsis[] =
	"[--db PATH] [--rules FILE | --rules-only FILE] [--unknown] [--run NAME] [--format table|csv]";

struct unknown_out {
	int csv;
	int64_t rows;
};

static int print_unknown(void *arg, const char *name, int64_t count, int64_t total_ns)
{
	struct unknown_out *u = arg;
	/* a trace's names reach a terminal: escapes and CR shown, not acted on */
	char *safe = cvc_text_safe_dup(name, u->csv);

	if (!safe)
		return 1;
	if (u->csv) {
		cvc_csv_field(stdout, safe);
		printf(",%lld,%.3f\n", (long long)count, (double)total_ns / 1e3);
	} else {
		printf("%14.3f %8lld  %s\n", (double)total_ns / 1e3, (long long)count, safe);
	}
	free(safe);
	u->rows++;
	return 0;
}

static void print_summary(const cvc_class_total *t, int64_t all_ns, int csv)
{
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
	if (csv)
		puts("class,count,total_us,share_pct");
	else
		printf("%-14s %10s %16s %8s\n", "class", "count", "total_us", "share");
	for (int i = 0; i < n; i++) {
		const cvc_class_total *x = &t[order[i]];
		double share = all_ns > 0 ? 100.0 * (double)x->total_ns / (double)all_ns : 0.0;

		count += x->count;
		if (csv)
			printf("%s,%lld,%.3f,%.2f\n", cvc_class_name((cvc_op_class)order[i]),
			       (long long)x->count, (double)x->total_ns / 1e3, share);
		else
			printf("%-14s %10lld %16.3f %7.2f%%\n",
			       cvc_class_name((cvc_op_class)order[i]), (long long)x->count,
			       (double)x->total_ns / 1e3, share);
	}
	if (!csv)
		printf("%-14s %10lld %16.3f %7.2f%%\n", "total", (long long)count,
		       (double)all_ns / 1e3, all_ns > 0 ? 100.0 : 0.0);
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
		{"format", 0, CLI_CHOICE, &format, "FMT", "output format", "table|csv"},
		{0},
	};
	cvc_rules *rules = NULL;
	cvc_db *db = NULL;
	int64_t run_id = -1;
	cvc_status st;
	int csv;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (npos)
		return cli_error("%s: unexpected argument '%s' (see 'cvc %s --help')", ctx->cmd,
				 argv[1], ctx->cmd);
	csv = strcmp(format, "csv") == 0;
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
		struct unknown_out u = {csv, 0};

		if (csv)
			puts("name,count,total_us");
		else
			printf("%14s %8s  %s\n", "total_us", "count", "name");
		st = cvc_classify_unknown(db, rules, run_id, print_unknown, &u);
		if (st) {
			rc = cli_fail(st, "%s", cvc_db_errmsg(db));
			goto out;
		}
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
		print_summary(t, all_ns, csv);
	}
	rc = 0;
out:
	cvc_rules_free(rules);
	return rc;
}
