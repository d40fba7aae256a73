/*
 * test_edges.c - the smaller items of issue 36 (13-17), each failing on the
 * code before its fix:
 *
 * 13. names from files are shown, not obeyed: U+202E reversed the report's
 *     headline; escape and CR characters reached the terminal raw;
 * 14. a command whose data could not be written to stdout has failed;
 * 15. a database in a folder the user cannot write can be read;
 * 16. two values for one thing are an error, not the last one winning;
 * 17. a foreign empty SQLite file, a typo'd --db with nothing to fit, and
 *     the profiler's odd folders and spools.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "testutil.h"

static const char *fresh_dir(char buf[4096])
{
	snprintf(buf, 4096, "%s", tu_tmpdir());
	return buf;
}

/* A folder another user can reach, wherever the project is, with a copy
 * of the tool (as unit.safety's): *tool receives its path. */
static void public_dir(char *dir, size_t cap, char *tool, size_t tcap, int mode)
{
	char cmd[9000];

	snprintf(dir, cap, "/tmp/cvc-public-XXXXXX");
	cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(tool, tcap, "%s/cvc", dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0755 '%s'", CVC_TOOL, tool, tool);
	cr_assert_eq(tu_run(cmd, NULL, NULL), 0, "%s", cmd);
	cr_assert_eq(chmod(dir, (mode_t)mode), 0);
}

static void remove_tree(const char *dir)
{
	char cmd[4200];

	snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
	tu_run(cmd, NULL, NULL);
}

/* 1 when the n bytes of s hold byte c. */
static int has_byte(const char *s, size_t n, unsigned char c)
{
	return s && memchr(s, c, n) != NULL;
}

static const char kineto[] =
	"{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", "
	"\"pid\": 0, \"tid\": 7, \"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0}}]}\n";

/* A database at path whose run and an unclassified kernel carry escape and
 * carriage-return characters, as a hostile trace may name them. */
static void hostile_names_db(const char *path)
{
	static const char run[] = "run\x1b[2J\r", name[] = "kern\x1b[31mel\rX";
	cvc_run_info ri = {.name = run};
	cvc_activity a;
	cvc_db *db = NULL;
	int64_t id, nid;

	cr_assert_eq(cvc_db_open(path, CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_db_begin(db), CVC_OK);
	cr_assert_eq(cvc_db_run_new(db, &ri, &id), CVC_OK);
	cr_assert_eq(cvc_db_intern(db, name, sizeof name - 1, &nid), CVC_OK);
	memset(&a, 0, sizeof a);
	a.run_id = id;
	a.kind = CVC_ACT_KERNEL;
	a.name_id = nid;
	a.start_ns = 10;
	a.end_ns = 20;
	a.correlation = a.external_id = -1;
	cr_assert_eq(cvc_db_activity_add(db, &a, NULL), CVC_OK);
	cr_assert_eq(cvc_db_commit(db), CVC_OK);
	cvc_db_close(db);
}

/* ---- 13. shown, not obeyed ---------------------------------------------------------- */

Test(edges, terminal_output_shows_escapes_instead_of_obeying_them)
{
	char dirbuf[4096], db[4200], yaml[4200], args[9000], *out = NULL, *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	const char *const cmds[] = {"analyze --db '%s'", "analyze --db '%s' --format csv",
				    "classify --db '%s' --unknown"};
	static const char study[] =
		"name: \"st\\e[2J\\rudy\"\nmodel: {name: m, layers: 4, hidden: 512, heads: 8, "
		"vocab: 1000, seq: 512}\nhardware: {gpu: H100-SXM, gpus: [8]}\n";

	snprintf(db, sizeof db, "%s", tu_path(dir, "h.db"));
	hostile_names_db(db);
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		size_t n;

		snprintf(args, sizeof args, cmds[i], db);
		cr_assert_eq(tu_cvc(args, &out, &err), 0, "%s: %s", args, err);
		n = strlen(out);
		cr_expect(!has_byte(out, n, 0x1b) && !has_byte(out, n, '\r'),
			  "%s: raw escape or CR on stdout", args);
		cr_expect(strstr(out, "\\x1b"), "%s: the escape is not shown: %s", args, out);
		free(out);
		free(err);
	}
	snprintf(yaml, sizeof yaml, "%s", tu_path(dir, "s.yaml"));
	cr_assert_eq(tu_write(yaml, study, sizeof study - 1), 0);
	snprintf(args, sizeof args, "project '%s' --csv -", yaml);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	cr_expect(!has_byte(err, strlen(err), 0x1b) && !has_byte(err, strlen(err), '\r'),
		  "project's summary: raw escape or CR");
	cr_expect(strstr(err, "project: 'st\\x1b[2J\\x0dudy'"), "%s", err);
	free(err);
}

/* U+202E in a model name turned the headline's "10%" into "%01": the page
 * holds the override as visible text, not as the character. */
Test(edges, report_shows_bidi_overrides_as_text)
{
	static const char proj[] =
		"model,gpu,gpus,step_s,tokens_per_s\n"
		"evil\xe2\x80\xaemodel,H100-SXM,16,2.5,200000\n";
	char dirbuf[4096], csv[4200], html[4200], args[20000], *page = NULL, *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	size_t n = 0;

	snprintf(csv, sizeof csv, "%s", tu_path(dir, "p.csv"));
	snprintf(html, sizeof html, "%s", tu_path(dir, "r.html"));
	cr_assert_eq(tu_write(csv, proj, sizeof proj - 1), 0);
	snprintf(args, sizeof args, "report --no-db --projection '%s' -o '%s' --csv-dir '%s/t'",
		 csv, html, dir);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	page = tu_read(html, &n);
	cr_assert(page);
	for (size_t i = 0; i + 3 <= n; i++)
		cr_assert(memcmp(page + i, "\xe2\x80\xae", 3) != 0,
			  "the page holds a raw U+202E at byte %zu", i);
	cr_expect(strstr(page, "evil\\\\u202emodel") || strstr(page, "evil\\u202emodel"),
		  "the override is not shown");
	free(page);
}

/* ---- 14. stdout's write errors ------------------------------------------------------ */

Test(edges, commands_fail_when_stdout_cannot_be_written, .timeout = 120)
{
	char dirbuf[4096], db[4200], csv[4200], args[40000], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	static const char table[] =
		"params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu\n"
		"1.7,24,2304,24,1,1,32,512,137\n";
	char cmds[9][4600];
	if (access("/dev/full", W_OK) != 0)
		cr_skip_test("/dev/full is missing here");
	snprintf(db, sizeof db, "%s", tu_path(dir, "a.db"));
	snprintf(csv, sizeof csv, "%s", tu_path(dir, "runs.csv"));
	cr_assert_eq(tu_write(csv, table, sizeof table - 1), 0);
	cr_assert_eq(tu_write(tu_path(dir, "t.json"), kineto, sizeof kineto - 1), 0);
	snprintf(args, sizeof args, "import --db '%s' '%s'", db, tu_path(dir, "t.json"));
	cr_assert_eq(tu_cvc(args, NULL, NULL), 0);
	snprintf(cmds[0], sizeof cmds[0], "validate --flops megatron-2021 '%s'", csv);
	snprintf(cmds[1], sizeof cmds[1], "classify --db '%s'", db);
	snprintf(cmds[2], sizeof cmds[2], "models --db '%s' list", db);
	snprintf(cmds[3], sizeof cmds[3], "predict gemm --gpu H100-SXM --m 4096 --n 4096 --k 4096");
	snprintf(cmds[4], sizeof cmds[4], "calibrate --plan");
	snprintf(cmds[5], sizeof cmds[5], "version");
	snprintf(cmds[6], sizeof cmds[6], "analyze --db '%s'", db);
	snprintf(cmds[7], sizeof cmds[7], "project --top 1 --csv -");
	snprintf(cmds[8], sizeof cmds[8], "project --models"); /* said "error: project: " */
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		const char *cmd = cmds[i];
		int rc;

		cr_assert_lt(snprintf(args, sizeof args, "%s >/dev/full", cmd), (int)sizeof args);
		rc = tu_cvc(args, NULL, &err);
		cr_expect_eq(rc, 1, "%s: exit %d (%s)", cmd, rc, err);
		cr_expect(err && (strstr(err, "standard output") || strstr(err, "stdout")), "%s: %s",
			  cmd, err);
		free(err);
		err = NULL;
	}
	/* a sweep of 10^8 scenarios stops at the write that failed: it priced
	 * every one before saying so (minutes here, hours at 10^8) */
	{
		static const char big[] =
			"model: {layers: 2, hidden: 256, heads: 4, seq: 256}\n"
			"hardware: {gpu: H100-SXM, gpus: 8}\n"
			"cost: {usd_per_gpu_hour: {from: 1, to: 10000, step: 1},\n"
			"       train_tokens: {from: 1e9, to: 1e13, step: 1e9}}\n";
		int rc;

		cr_assert_eq(tu_write(tu_path(dir, "big.yaml"), big, sizeof big - 1), 0);
		snprintf(args, sizeof args, "project '%s' --intervals off -f csv >/dev/full",
			 tu_path(dir, "big.yaml"));
		rc = tu_cvc(args, NULL, &err);
		cr_expect_eq(rc, 1, "exit %d (%s)", rc, err);
		cr_expect(err && strstr(err, "standard output: write error"), "%s", err);
		/* said once: the exit check does not repeat the command's own line */
		cr_expect(err && !strstr(err, "cannot write to standard output"), "%s", err);
		free(err);
	}
}

/* ---- 15. a database in a read-only folder ---------------------------------------------- */

/*
 * As a user who may not write the folder (root: nobody, in a folder only
 * root may write; anyone else: their own folder made read-only), every
 * command that only reads gets its answer; "attempt to write a readonly
 * database" before.
 */
Test(edges, a_database_in_a_read_only_folder_can_be_read)
{
	char ro[1024], rw[1024], tool[1100], tool2[1100], db[1200], trace[1200], args[12000];
	char pre[128], *err = NULL;
	const char *const cmds[] = {"analyze --db '%s'", "classify --db '%s' --unknown",
				    "export --db '%s' --perfetto -", "models --db '%s' list",
				    "project --db '%s' --top 1 --csv -",
				    "report --db '%s' -o '%s/r.html'"};
	int root = geteuid() == 0;

	public_dir(ro, sizeof ro, tool, sizeof tool, 0755);
	public_dir(rw, sizeof rw, tool2, sizeof tool2, 0777);
	snprintf(db, sizeof db, "%s/a.db", ro);
	snprintf(trace, sizeof trace, "%s/t.json", ro);
	cr_assert_eq(tu_write(trace, kineto, sizeof kineto - 1), 0);
	snprintf(args, sizeof args, "import --db '%s' '%s'", db, trace);
	cr_assert_eq(tu_cvc(args, NULL, NULL), 0);
	cr_assert_neq(access(tu_path(ro, "a.db-wal"), F_OK), 0, "a clean close leaves no log");
	if (!root)
		cr_assert_eq(chmod(ro, 0555), 0);
	snprintf(pre, sizeof pre, "%s",
		 root ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "");
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		char cmd[9000];
		int rc;

		snprintf(cmd, sizeof cmd, cmds[i], db, rw);
		snprintf(args, sizeof args, "%s'%s' %s >/dev/null", pre, tool, cmd);
		rc = tu_run(args, NULL, &err);
		cr_expect_eq(rc, 0, "%s: exit %d (%s)", cmd, rc, err);
		free(err);
		err = NULL;
	}
	remove_tree(ro);
	remove_tree(rw);
}

/* ---- 16. two values for one thing --------------------------------------------------------- */

static void expect_refused(const char *args, const char *want)
{
	char *err = NULL;
	int rc = tu_cvc(args, NULL, &err);

	cr_expect_eq(rc, 2, "%s: exit %d (%s)", args, rc, err);
	cr_expect(err && strstr(err, want), "%s: %s", args, err);
	free(err);
}

Test(edges, two_values_for_one_thing_are_refused)
{
	static const char *const studies[][2] = {
		{"model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512, "
		 "seq_len: 1024}\n", "'seq_len' and 'seq' set the same field"},
		{"model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512, "
		 "head_dim: 64, kv_channels: 128}\n", "'kv_channels' and 'head_dim' set the same"},
		{"model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512}\n"
		 "training: {zero: 1, fsdp: true}\n", "'fsdp' and 'zero' set the same field"},
		{"model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512}\n---\n"
		 "model: {name: n}\n", "a second YAML document"},
		{"model: {name: \"ab\\0cd\", layers: 4, hidden: 512, heads: 8, vocab: 1000, "
		 "seq: 512}\n", "found a NUL byte"},
		/* a scale factor in hardware's scale mapping and by its own name */
		{"model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8, scale: {compute: 2}, scale_compute: 3}\n",
		 "'scale_compute' and 'compute' set the same field"},
	};
	char dirbuf[4096], path[4200], args[9000];
	const char *dir = fresh_dir(dirbuf);

	for (size_t i = 0; i < sizeof studies / sizeof studies[0]; i++) {
		snprintf(path, sizeof path, "%s/s%zu.yaml", dir, i);
		cr_assert_eq(tu_write(path, studies[i][0], strlen(studies[i][0])), 0);
		snprintf(args, sizeof args, "project '%s'", path);
		expect_refused(args, studies[i][1]);
	}
	/* a name cut short by \u0000 in a trace */
	snprintf(path, sizeof path, "%s/nul.json", dir);
	{
		static const char t[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", "
					"\"name\": \"gemm\\u0000evil\", \"pid\": 0, \"tid\": 7, "
					"\"ts\": 1, \"dur\": 2, \"args\": {\"device\": 0}}]}\n";

		cr_assert_eq(tu_write(path, t, sizeof t - 1), 0);
	}
	snprintf(args, sizeof args, "import --db '%s/n.db' '%s'", dir, path);
	expect_refused(args, "\\u0000 in a string");
	/* one column twice: a projection, a table of measurements */
	snprintf(path, sizeof path, "%s/p.csv", dir);
	cr_assert_eq(tu_write(path, "model,gpu,gpus,step_s,tokens_per_s,gpus\nm,H100-SXM,16,2.5,2e5,32\n",
			      65), 0);
	snprintf(args, sizeof args, "report --no-db --projection '%s' -o '%s/r.html'", path, dir);
	expect_refused(args, "column 'gpus' given twice (columns 3 and 6)");
	snprintf(path, sizeof path, "%s/v.csv", dir);
	cr_assert_eq(tu_write(path,
			      "params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu,gpus\n"
			      "1.7,24,2304,24,1,1,32,512,137,64\n", 106), 0);
	snprintf(args, sizeof args, "validate --flops megatron-2021 '%s'", path);
	expect_refused(args, "column 'gpus' given twice (columns 7 and 10)");
}

/* validate --by kept 256 groups and dropped the rows of every other value,
 * silently: they are one last group now, and every row is counted. */
Test(edges, validate_by_keeps_every_row)
{
	char dirbuf[4096], path[4200], args[9000], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	FILE *f;
	int rows = 0;

	snprintf(path, sizeof path, "%s/many.csv", dir);
	f = fopen(path, "w");
	cr_assert(f);
	fputs("params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu,note\n", f);
	for (int i = 0; i < 300; i++)
		fprintf(f, "1.7,24,2304,24,1,1,32,512,137,n%d\n", i);
	cr_assert_eq(fclose(f), 0);
	snprintf(args, sizeof args, "validate --flops megatron-2021 --by note '%s' >/dev/null", path);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	{
		const char *g = strstr(err, "note=(every value past the first 255): ");

		cr_expect(g && sscanf(g, "note=(every value past the first 255): %d rows", &rows) == 1,
			  "%s", err);
		cr_expect_eq(rows, 300 - 255, "%s", err);
	}
	free(err);
}

/* ---- 17. smaller refusals ------------------------------------------------------------------ */

/* An empty SQLite file that another program marked as its own got cvc's
 * schema; `cvc fit --db typo.db` with nothing to fit left typo.db. */
Test(edges, foreign_empty_files_and_typo_databases_are_left_alone)
{
	char dirbuf[4096], db[4200], args[9000];
	const char *dir = fresh_dir(dirbuf);
	sqlite3 *sq = NULL;

	snprintf(db, sizeof db, "%s", tu_path(dir, "theirs.db"));
	cr_assert_eq(sqlite3_open(db, &sq), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(sq, "PRAGMA application_id=123456", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(sq);
	cr_assert_eq(tu_write(tu_path(dir, "t.json"), kineto, sizeof kineto - 1), 0);
	snprintf(args, sizeof args, "import --db '%s' '%s'", db, tu_path(dir, "t.json"));
	expect_refused(args, "not a cvc database (application_id 0x0001e240)");
	cr_assert_eq(sqlite3_open(db, &sq), SQLITE_OK);
	cr_expect_eq(tu_sq_int(sq, "PRAGMA application_id"), 123456);
	cr_expect_eq(tu_sq_int(sq, "SELECT count(*) FROM sqlite_schema"), 0);
	sqlite3_close(sq);
	snprintf(db, sizeof db, "%s", tu_path(dir, "typo.db"));
	snprintf(args, sizeof args, "fit --db '%s'", db);
	expect_refused(args, "nothing to fit");
	cr_expect_neq(access(db, F_OK), 0, "'%s' was left", db);
}

Test(edges, profile_folders_and_spools_are_checked)
{
	char dirbuf[4096], args[9000], md[4200], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	int rc;

	cr_assert_eq(tu_write(tu_path(dir, "file.txt"), "x", 1), 0);
	snprintf(args, sizeof args, "profile -o '%s' -- true", tu_path(dir, "file.txt"));
	expect_refused(args, "is not a folder");
	snprintf(args, sizeof args, "profile --materialize '%s'", tu_path(dir, "missing"));
	expect_refused(args, "cannot open folder");
	/* a file that is no spool, alone: a format error of the input (exit 2,
	 * it was 1) */
	snprintf(md, sizeof md, "%s", tu_path(dir, "spools"));
	cr_assert_eq(mkdir(md, 0755), 0);
	cr_assert_eq(tu_write(tu_path(md, "cvc-b.spool"), "garbage\n", 8), 0);
	snprintf(args, sizeof args, "profile --materialize '%s'", md);
	expect_refused(args, "expected a 16-byte CVCSPOOL header");
	/* then a FIFO named like a spool beside it */
	cr_assert_eq(mkfifo(tu_path(md, "cvc-a.spool"), 0600), 0);
	snprintf(args, sizeof args, "timeout -k 5 30 '%s' profile --materialize '%s'", CVC_TOOL, md);
	rc = tu_run(args, NULL, &err);
	cr_expect_eq(rc, 2, "exit %d (124: it hung on the FIFO): %s", rc, err);
	cr_expect(err && strstr(err, "not a regular file"), "%s", err);
	free(err);
	/* a program that does not start leaves no folder behind */
	snprintf(args, sizeof args, "profile -o '%s' -- /nonexistent/program", tu_path(dir, "new"));
	rc = tu_cvc(args, NULL, &err);
	if (err && strstr(err, "built without"))
		cr_log_info("this cvc has no profiler: the folder part is not run");
	else
		cr_expect_neq(access(tu_path(dir, "new"), F_OK), 0, "an empty folder was left (exit %d)",
			      rc);
	free(err);
}

/* YAML's booleans in each spelling its schemas give ('True' is 1.2 core's,
 * 'Yes' 1.1's): read alike, never "expected true or false". */
Test(edges, yaml_booleans_in_any_letter_case)
{
	char dirbuf[4096], path[4200], args[9000], *out = NULL;
	const char *dir = fresh_dir(dirbuf);
	static const char y[] = "model: {layers: 4, hidden: 2048, heads: 16, seq: 2048}\n"
				"parallelism: {tp: 2, sp: True}\nhardware: {gpu: H100-SXM, gpus: 8}\n"
				"comm: {tp_overlap: YES, dp_overlap: Off}\n";

	snprintf(path, sizeof path, "%s/b.yaml", dir);
	cr_assert_eq(tu_write(path, y, sizeof y - 1), 0);
	snprintf(args, sizeof args, "project '%s' --csv - -f csv", path);
	cr_assert_eq(tu_cvc(args, &out, NULL), 0, "%s", out ? out : "");
	{
		char *p = out, *h[512], *f[512];
		size_t nh = tu_record(&p, h, 512);

		cr_assert_eq(tu_record(&p, f, 512), nh);
		cr_expect_str_eq(f[tu_col(h, nh, "sp")], "1");
		cr_expect_str_eq(f[tu_col(h, nh, "tp_overlap")], "1");
		cr_expect_str_eq(f[tu_col(h, nh, "dp_overlap")], "0");
	}
	free(out);
}
