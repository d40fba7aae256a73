/*
 * test_bounded.c - hostile inputs get bounded work (issue 36 items 9-11):
 *
 * 9.  a scenario file's duplicate-key check is linear (100k keys in one
 *     section took 50 s), its YAML is counted before libyaml loads it (a
 *     16 MiB list peaked at 1.41 GB), and running out of memory says so
 *     (it was "expected valid YAML");
 * 10. `cvc fit` reads a FIFO or a pipe (it opened its input twice: a FIFO
 *     hung, stdin was "no such file");
 * 11. numbers no projection or measurement can hold are refused where they
 *     are read, not charted or averaged;
 * 18. a gzip input may expand at most 100 times its compressed size (plus
 *     16 MiB) unless --max-inflate lifts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <zlib.h>

#include "testutil.h"

static const char *fresh_dir(char buf[4096])
{
	snprintf(buf, 4096, "%s", tu_tmpdir());
	return buf;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs `cvc project FILE --top 1 --csv -` in a child; its exit code, peak
 * RSS (KiB) and stderr (malloc'd, into *err). */
static int project_rss(const char *yaml, const char *errpath, long *rss_kb, char **err)
{
	struct rusage ru;
	int status = 0;
	pid_t pid = fork();

	cr_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(fd, 2);
		execl(CVC_TOOL, CVC_TOOL, "project", yaml, "--top", "1", "--csv", "-", (char *)NULL);
		_exit(127);
	}
	memset(&ru, 0, sizeof ru);
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	*rss_kb = ru.ru_maxrss;
	*err = tu_read(errpath, NULL);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- 9. YAML --------------------------------------------------------------------- */

/* model: a study header, then a section of n distinct keys and k0 again. */
Test(bounded, duplicate_keys_are_found_in_linear_time)
{
	char dirbuf[4096], path[4200], args[8300], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	const int n = 100000;
	FILE *f;
	double t0;
	int rc;

	snprintf(path, sizeof path, "%s", tu_path(dir, "keys.yaml"));
	f = fopen(path, "w");
	cr_assert(f);
	fputs("model:\n", f);
	for (int i = 0; i < n; i++)
		fprintf(f, "  k%d: 1\n", i);
	fputs("  k0: 2\n", f);
	cr_assert_eq(fclose(f), 0);
	snprintf(args, sizeof args, "project '%s'", path);
	t0 = now_s();
	rc = tu_cvc(args, NULL, &err);
	cr_expect_eq(rc, 2, "exit %d: %s", rc, err);
	cr_expect(err && strstr(err, "line 100002, column 3: key 'k0' given twice"), "%s", err);
	/* quadratic, this took 50 s; linear, well under a second */
	cr_expect_lt(now_s() - t0, 10.0, "%.1f s for %d keys", now_s() - t0, n);
	free(err);
}

/* A list of 8 M scalars in a 16 MiB file: counted and refused before
 * libyaml builds its 1.35 GB document. */
Test(bounded, yaml_nodes_are_counted_before_loading)
{
	char dirbuf[4096], path[4200], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	long rss = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof path, "%s", tu_path(dir, "list.yaml"));
	f = fopen(path, "w");
	cr_assert(f);
	fputs("model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512}\n"
	      "hardware: {gpu: H100-SXM, gpus: [1", f);
	for (int i = 1; i < 8000000; i++)
		fputs(",1", f);
	fputs("]}\n", f);
	cr_assert_eq(fclose(f), 0);
	rc = project_rss(path, tu_path(dir, "err"), &rss, &err);
	cr_expect_eq(rc, 2, "exit %d: %s", rc, err);
	cr_expect(err && strstr(err, "more YAML than a scenario file may hold: 1500000 nodes"), "%s",
		  err);
	if (!UNDER_ASAN)
		cr_expect_lt(rss, 128L * 1024, "peak RSS %ld KiB", rss);
	free(err);
}

/* libyaml running out of memory is the system's failure (exit 1), not
 * invalid YAML (it was exit 2, "expected valid YAML"). */
Test(bounded, yaml_out_of_memory_says_so)
{
	char dirbuf[4096], path[4200], cmd[9000], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	FILE *f;
	int rc;

	if (UNDER_ASAN)
		cr_skip_test("an address-space limit and AddressSanitizer's shadow do not mix");
	snprintf(path, sizeof path, "%s", tu_path(dir, "big.yaml"));
	f = fopen(path, "w");
	cr_assert(f);
	fputs("model: {name: m, layers: 4, hidden: 512, heads: 8, vocab: 1000, seq: 512}\n"
	      "hardware: {gpu: H100-SXM, gpus: [8", f);
	for (int i = 1; i < 1000000; i++)
		fputs(",8", f);
	fputs("]}\n", f);
	cr_assert_eq(fclose(f), 0);
	/* the million nodes need about 200 MB; give the process 150 */
	snprintf(cmd, sizeof cmd, "ulimit -v 150000; '%s' project '%s' --top 1 --csv - >/dev/null",
		 CVC_TOOL, path);
	rc = tu_run(cmd, NULL, &err);
	cr_expect_eq(rc, 1, "exit %d: %s", rc, err);
	cr_expect(err && strstr(err, "out of memory while reading the YAML"), "%s", err);
	cr_expect(err && !strstr(err, "expected valid YAML"), "%s", err);
	free(err);
}

/* ---- 10. cvc fit reads what can be read once ---------------------------------------- */

static const char nccl_log[] =
	"# nccl-tests all_reduce_perf\n#  Rank  0 Group  0 Pid 1 on node0 device  0 [0x07] "
	"NVIDIA A100-SXM4-80GB\n#  Rank  1 Group  0 Pid 2 on node0 device  1 [0x0b] "
	"NVIDIA A100-SXM4-80GB\n"
	"#       size         count      type   redop    root     time   algbw   busbw "
	"#wrong     time   algbw   busbw #wrong\n"
	"     1048576        262144     float     sum      -1    20.00   52.43   52.43"
	"      0    20.00   52.43   52.43      0\n"
	"     2097152        524288     float     sum      -1    30.00   69.91   69.91"
	"      0    30.00   69.91   69.91      0\n"
	"     4194304       1048576     float     sum      -1    50.00   83.89   83.89"
	"      0    50.00   83.89   83.89      0\n"
	"     8388608       2097152     float     sum      -1    90.00   93.21   93.21"
	"      0    90.00   93.21   93.21      0\n"
	"    16777216       4194304     float     sum      -1   170.00   98.69   98.69"
	"      0   170.00   98.69   98.69      0\n"
	"    33554432       8388608     float     sum      -1   330.00  101.68  101.68"
	"      0   330.00  101.68  101.68      0\n"
	"    67108864      16777216     float     sum      -1   650.00  103.24  103.24"
	"      0   650.00  103.24  103.24      0\n";

Test(bounded, fit_reads_a_fifo_and_stdin)
{
	char dirbuf[4096], log[4200], fifo[4200], db[4200], cmd[32768], *out = NULL, *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	int rc;

	snprintf(log, sizeof log, "%s", tu_path(dir, "ar.log"));
	snprintf(fifo, sizeof fifo, "%s", tu_path(dir, "ar.fifo"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "m.db"));
	cr_assert_eq(tu_write(log, nccl_log, sizeof nccl_log - 1), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	/* a FIFO: opened once, read twice from a private copy (it hung) */
	snprintf(cmd, sizeof cmd,
		 "cat '%s' > '%s' & timeout -k 5 60 '%s' fit --db '%s' --system dgx-a100 '%s'", log,
		 fifo, CVC_TOOL, db, fifo);
	rc = tu_run(cmd, &out, &err);
	cr_expect_eq(rc, 0, "FIFO: exit %d: %s", rc, err);
	cr_expect(out && strstr(out, "collective A100-SXM-80GB"), "FIFO: %s", out);
	free(out);
	free(err);
	/* standard input, '-' (it was "cannot open: No such file") */
	snprintf(cmd, sizeof cmd, "'%s' fit --db '%s' --system dgx-a100 - < '%s'", CVC_TOOL, db, log);
	rc = tu_run(cmd, &out, &err);
	cr_expect_eq(rc, 0, "stdin: exit %d: %s", rc, err);
	cr_expect(out && strstr(out, "collective A100-SXM-80GB"), "stdin: %s", out);
	free(out);
	free(err);
	cr_expect_eq(access(tu_path(dir, "m.db"), F_OK), 0);
}

/* ---- 18. decompression bombs -------------------------------------------------------- */

/*
 * A 60 KB gzip trace of 350 kernels with distinct 60 KB names inflates to
 * 21 MB: 350 times its size, where real traces expand 5 to 20 times.  It
 * became a database of that size (a 1.2 MB one of 988 MB); now it is
 * refused once it passes 100 times plus 16 MiB, and --max-inflate 0
 * imports it.
 */
Test(bounded, decompression_bombs_are_refused)
{
	char dirbuf[4096], gzp[4200], db[4200], args[9000], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	char *name = malloc(60001);
	gzFile gz;
	int rc;

	cr_assert(name);
	memset(name, 'a', 60000);
	name[60000] = '\0';
	snprintf(gzp, sizeof gzp, "%s", tu_path(dir, "bomb.json.gz"));
	snprintf(db, sizeof db, "%s", tu_path(dir, "b.db"));
	gz = gzopen(gzp, "wb9");
	cr_assert(gz);
	gzputs(gz, "{\"traceEvents\": [");
	for (int i = 0; i < 350; i++) {
		gzprintf(gz, "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"", i ? "," : "");
		gzputs(gz, name);
		gzprintf(gz, "%d\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":1,\"args\":{\"device\":0}}",
			 i, i);
	}
	gzputs(gz, "]}\n");
	cr_assert_eq(gzclose(gz), Z_OK);
	free(name);
	snprintf(args, sizeof args, "import --db '%s' '%s'", db, gzp);
	rc = tu_cvc(args, NULL, &err);
	cr_expect_eq(rc, 2, "exit %d: %s", rc, err);
	cr_expect(err && strstr(err, "refused as a decompression bomb") && strstr(err, gzp), "%s",
		  err);
	cr_expect_neq(access(db, F_OK), 0, "a database was left");
	free(err);
	snprintf(args, sizeof args, "import --db '%s' --max-inflate 0 '%s'", db, gzp);
	rc = tu_cvc(args, NULL, &err);
	cr_expect_eq(rc, 0, "lifted: exit %d: %s", rc, err);
	free(err);
}

/* ---- 11. numbers no projection or measurement holds ------------------------------------ */

/* A projection whose GPU count is 1e308, or whose tokens/s is 1e-320:
 * charted as they were, Chromium never finished the page. */
Test(bounded, report_refuses_numbers_no_projection_holds)
{
	static const char *const bad[][2] = {
		{"1e308", "100000"}, {"8", "1e-320"}, {"8.5", "100000"}, {"8", "-5"}};
	static const char *const want[] = {"column gpus: expected a whole number of GPUs",
					   "column tokens_per_s: expected tokens/s",
					   "column gpus: expected a whole number of GPUs",
					   "column tokens_per_s: expected tokens/s"};
	char dirbuf[4096], csv[4200], html[4200], args[9000], text[512], *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	int rc;

	snprintf(csv, sizeof csv, "%s", tu_path(dir, "p.csv"));
	snprintf(html, sizeof html, "%s", tu_path(dir, "r.html"));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int n = snprintf(text, sizeof text,
				 "model,gpu,gpus,step_s,tokens_per_s\n"
				 "m,H100-SXM,16,2.5,200000\nm,H100-SXM,%s,2.5,%s\n", bad[i][0],
				 bad[i][1]);

		cr_assert_eq(tu_write(csv, text, (size_t)n), 0);
		snprintf(args, sizeof args, "report --no-db --projection '%s' -o '%s'", csv, html);
		rc = tu_cvc(args, NULL, &err);
		cr_expect_eq(rc, 2, "%s,%s: exit %d: %s", bad[i][0], bad[i][1], rc, err);
		cr_expect(err && strstr(err, want[i]) && strstr(err, "row 2") && strstr(err, csv),
			  "%s,%s: %s", bad[i][0], bad[i][1], err);
		cr_expect_neq(access(html, F_OK), 0, "a page was written");
		free(err);
		err = NULL;
	}
	/* the same file with plausible numbers is charted */
	{
		static const char good[] = "model,gpu,gpus,step_s,tokens_per_s\nm,H100-SXM,16,2.5,2e5\n";

		cr_assert_eq(tu_write(csv, good, sizeof good - 1), 0);
	}
	snprintf(args, sizeof args, "report --no-db --projection '%s' -o '%s'", csv, html);
	cr_expect_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
}

/* A measured cell of 1e308 made the summary "MAPE nan%"; an MFU of 500%
 * was accepted.  Both rows are now written as not projected, and the
 * summary is the good rows'. */
Test(bounded, validate_refuses_measurements_no_gpu_makes)
{
	static const char table[] =
		"params_b,heads,hidden,layers,tp,pp,gpus,global_batch,tflops_per_gpu,mfu_pct\n"
		"1.7,24,2304,24,1,1,32,512,137,\n"
		"1.7,24,2304,24,1,1,32,512,1e308,\n"
		"3.6,32,3072,30,2,1,64,512,,500\n";
	char dirbuf[4096], csv[4200], args[9000], *out = NULL, *err = NULL;
	const char *dir = fresh_dir(dirbuf);
	int rc;

	snprintf(csv, sizeof csv, "%s", tu_path(dir, "runs.csv"));
	cr_assert_eq(tu_write(csv, table, sizeof table - 1), 0);
	snprintf(args, sizeof args, "validate --flops megatron-2021 '%s'", csv);
	rc = tu_cvc(args, &out, &err);
	cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(err && !strstr(err, "nan"), "%s", err);
	cr_expect(err && strstr(err, "1 projected"), "%s", err);
	cr_expect(out && strstr(out, "not projected: column tflops_per_gpu: '1e308'"), "%s", out);
	cr_expect(out && strstr(out, "not projected: column mfu_pct: '500'"), "%s", out);
	free(out);
	free(err);
}
