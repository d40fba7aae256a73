/*
 * test_ntjson.c - the JSON file nccl-tests writes with -J (db/ntjson.c):
 * read into the same log as the text, imported and fitted the same way,
 * told apart from Kineto JSON, and refused with a message when wrong.
 *
 * No real -J file is in ../shared: the files here are written from the
 * format nccl-tests' src/util.cu writes (compact, as it does), and
 * tests/data/nccl-json-h100x16-ib400-all-reduce.json is the shared text
 * log nccl-scale/h100x16_2node_ib400_all_reduce_perf.txt transcribed by
 * hand (tests/data/nccl-json.md says what in it the log did not print).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <zlib.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "cvc/cvc_nccltab.h"
#include "testutil.h"

#define TRANSCRIPTION CVC_SOURCE_DIR "/tests/data/nccl-json-h100x16-ib400-all-reduce.json"
#define SHARED_LOG "traces/nccl-scale/h100x16_2node_ib400_all_reduce_perf.txt"

/* A -J file to write: what the run was, and its results generated. */
struct spec {
	const char *binary;     /* args[0]; NULL: "./build/all_reduce_perf" */
	const char *more_args;  /* JSON items after args[0], each with its comma first */
	const char *env;        /* JSON items of env */
	int nthreads, ngpus;    /* 0: 1 */
	int nhosts, per_host;   /* device entries; 0: 1 x 1 */
	const char *op;         /* the bus factor the rows are written with; NULL all_reduce */
	int factor_ranks;       /* ... at this rank count; 0: the device entries' */
	int nsizes;             /* 0: 6 */
	const char *time_key;   /* NULL: "time" */
	int oop_null, nwrong_null;
	const char *results;    /* the results list's items as given, instead of generated */
};

static double factor_of(const char *op, int n)
{
	if (strcmp(op, "all_reduce") == 0)
		return 2.0 * (n - 1) / n;
	if (strcmp(op, "all_gather") == 0 || strcmp(op, "reduce_scatter") == 0)
		return (double)(n - 1) / n;
	return 1;
}

/* The results util.cu would write for s: sizes 1 KiB x 4^i. */
static void results_of(FILE *f, const struct spec *s, int nranks)
{
	const char *op = s->op ? s->op : "all_reduce";
	double fac = factor_of(op, s->factor_ranks ? s->factor_ranks : nranks);
	int reducing = strstr(op, "reduce") != NULL;

	for (int i = 0; i < (s->nsizes ? s->nsizes : 6); i++) {
		long long size = 1024LL << (2 * i);

		fprintf(f, "%s{\"size\":%lld,\"count\":%lld,\"type\":\"float\",\"redop\":\"%s\","
			"\"root\":\"%6i\",", i ? "," : "", size, size / 4, reducing ? "sum" : "none", -1);
		for (int h = s->oop_null ? 1 : 0; h < 2; h++) {
			double t = (10 + size / 2e4) * (h ? 1.01 : 1), alg = size / t / 1e3;

			if (h == 1 && s->oop_null)
				fprintf(f, "\"out_of_place\":null,");
			fprintf(f, "\"%s\":{\"%s\":%lf,\"alg_bw\":%lf,\"bus_bw\":%lf,\"nwrong\":%s},",
				h ? "in_place" : "out_of_place", s->time_key ? s->time_key : "time", t,
				alg, alg * fac, s->nwrong_null ? "null" : "0.000000");
		}
		fprintf(f, "\"actual_iterations\":20,\"experiment_name\":\"\"}");
	}
}

/* The document, compact as util.cu writes it (malloc'd). */
static char *doc(const struct spec *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int hosts = s->nhosts ? s->nhosts : 1, per = s->per_host ? s->per_host : 1;
	int nt = s->nthreads ? s->nthreads : 1, ng = s->ngpus ? s->ngpus : 1;

	cr_assert(f);
	fprintf(f, "{\"version\":1,\"start_time\":\"2025-11-02 10:00:00\",\"args\":[\"%s\"%s],"
		"\"env\":[%s],\"nccl_version\":22703,\"config\":{\"nthreads\":%d,\"ngpus\":%d,"
		"\"minimum_bytes\":1024,\"maximum_bytes\":1073741824,\"step_factor\":4,"
		"\"warmup_iters\":5,\"iterations\":20,\"aggregated_iterations\":1,\"validation\":1,"
		"\"graph\":0,\"blocking_collectives\":\"false\",\"parallel_init\":\"false\","
		"\"devices\":[", s->binary ? s->binary : "./build/all_reduce_perf",
		s->more_args ? s->more_args : "", s->env ? s->env : "", nt, ng);
	for (int e = 0; e < hosts * per; e++)
		fprintf(f, "%s{\"rank\":%d,\"group\":0,\"pid\":%d,\"hostname\":\"node%d\",\"device\":%d,"
			"\"device_hex\":\"0000:%02x:00\",\"device_info\":\"NVIDIA H200\"}",
			e ? "," : "", e * nt * ng, 4000 + e, e / per, e % per, 0x18 + e % per);
	fprintf(f, "]},\"results\":[");
	if (s->results)
		fputs(s->results, f);
	else
		results_of(f, s, hosts * per * nt * ng);
	fprintf(f, "],\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},\"average_bus_bandwidth\":"
		"{\"bandwidth\":1.000000,\"okay\":\"unchecked\"},\"errors\":[],\"end_time\":"
		"\"2025-11-02 10:01:00\"}");
	fclose(f);
	return text;
}

/* Writes text as name in a fresh directory; returns the path. */
static const char *put(const char *name, const char *text, size_t len)
{
	const char *path = tu_path(tu_tmpdir(), name);

	cr_assert_eq(tu_write(path, text, len), 0);
	return path;
}

/* Reads path, asserting status want (message into err). */
static void read_as(const char *path, cvc_nt_log *log, cvc_status want, char *err, size_t errlen)
{
	cvc_status st = cvc_nt_read(path, NULL, log, NULL, NULL, err, errlen);

	cr_assert_eq(st, want, "'%s': status %d, want %d: %s", path, st, want, err);
}

/* Writes s's document and reads it, asserting success. */
static const char *read_spec(const struct spec *s, const char *name, cvc_nt_log *log)
{
	char *text = doc(s), err[1024];
	const char *path = put(name, text, strlen(text));

	free(text);
	read_as(path, log, CVC_OK, err, sizeof err);
	return path;
}

/* The rows of a and b are the same results. */
static void same_rows(const cvc_nt_log *a, const cvc_nt_log *b)
{
	cr_assert_eq(a->nrows, b->nrows);
	for (size_t i = 0; i < a->nrows; i++) {
		const cvc_nt_row *x = &a->rows[i], *y = &b->rows[i];

		cr_assert(x->size == y->size && x->count == y->count && x->root == y->root &&
			  x->nhalf == y->nhalf && !strcmp(x->type, y->type) &&
			  !strcmp(x->redop, y->redop), "row %zu", i);
		for (int h = 0; h < x->nhalf; h++)
			cr_assert(x->time[h] == y->time[h] && x->algbw[h] == y->algbw[h] &&
				  x->busbw[h] == y->busbw[h] && x->wrong[h] == y->wrong[h],
				  "row %zu half %d: %f %f %f vs %f %f %f", i, h, x->time[h], x->algbw[h],
				  x->busbw[h], y->time[h], y->algbw[h], y->busbw[h]);
	}
}

/*
 * The shared log with the 16 device lines its source left out put back, as
 * nccl-tests prints them, naming the hosts and GPU the transcription's
 * device entries name; returns its path.
 */
static const char *log_with_devices(const char *log)
{
	size_t len = 0;
	char *text = tu_read(log, &len), *nl;
	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	const char *path;

	cr_assert(text && f);
	nl = strstr(text, "# nThread");
	cr_assert(nl);
	nl = strchr(nl, '\n') + 1;
	fwrite(text, 1, (size_t)(nl - text), f);
	for (int r = 0; r < 16; r++)
		fprintf(f, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0000:%02x:00] "
			"NVIDIA H100 80GB HBM3\n", r, 0, 1000 + r, r < 8 ? "host0" : "host1", r % 8,
			0x10 + r % 8);
	fputs(nl, f);
	fclose(f);
	path = put("restored.txt", out, olen);
	free(text);
	free(out);
	return path;
}

Test(ntjson, transcription_reads_as_the_text_log)
{
	const char *log = tu_shared(SHARED_LOG), *restored;
	cvc_nt_log j, t, r;
	char err[1024];

	read_as(TRANSCRIPTION, &j, CVC_OK, err, sizeof err);
	read_as(log, &t, CVC_OK, err, sizeof err);
	cr_assert_eq(j.nrows, 14);
	same_rows(&j, &t);
	cr_assert_str_eq(j.op, t.op);
	cr_assert_str_eq(j.op, "all_reduce");
	cr_assert_eq(j.nranks, t.nranks);
	cr_assert_eq(j.nranks, 16);
	cr_assert_eq(j.gpus_per_node, 8);
	cr_assert_str_eq(j.gpu, "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(j.nccl_version, "2.26.2");
	cr_assert_str_eq(j.incomplete, "");
	cr_assert(j.json && !t.json);
	/* the shared log left its device lines out: with them back, the text
	 * gives the JSON's ranks per node and GPU too */
	cr_assert_eq(t.gpus_per_node, 0);
	restored = log_with_devices(log);
	read_as(restored, &r, CVC_OK, err, sizeof err);
	same_rows(&j, &r);
	cr_assert_str_eq(j.op, r.op);
	cr_assert_eq(j.nranks, r.nranks);
	cr_assert_eq(j.gpus_per_node, r.gpus_per_node);
	cr_assert_str_eq(j.gpu, r.gpu);
	cvc_nt_log_release(&j);
	cvc_nt_log_release(&t);
	cvc_nt_log_release(&r);
}

/* `cvc fit` on path (args before it), the stored models as CSV without
 * the source column (malloc'd). */
static char *fit_csv(const char *args, const char *path)
{
	const char *db = tu_path(tu_tmpdir(), "m.db");
	char cmd[8192], *out = NULL, *err = NULL, *p;

	snprintf(cmd, sizeof cmd, "fit --db '%s' %s '%s'", db, args, path);
	cr_assert_eq(tu_cvc(cmd, NULL, &err), 0, "%s: %s", cmd, err);
	free(err);
	snprintf(cmd, sizeof cmd, "models --db '%s' --format csv", db);
	cr_assert_eq(tu_cvc(cmd, &out, NULL), 0);
	/* one model: cut its line before the last column, the file's name */
	p = strrchr(out, ',');
	cr_assert(p && tu_count_lines(out) == 2, "%s", out);
	*p = '\0';
	return out;
}

Test(ntjson, transcription_fits_as_the_text_log)
{
	const char *log = tu_shared(SHARED_LOG);
	char *j = fit_csv("", TRANSCRIPTION);
	char *t = fit_csv("--gpu 'NVIDIA H100 80GB HBM3'", log);
	char *r = fit_csv("", log_with_devices(log));

	cr_assert(strstr(j, "collective,H100-SXM,,allreduce,16,8,14,"), "%s", j);
	cr_assert_str_eq(j, t);
	cr_assert_str_eq(j, r);
	free(j);
	free(t);
	free(r);
}

Test(ntjson, all_gather_and_sendrecv)
{
	struct spec ag = {.binary = "/opt/nccl-tests/build/all_gather_perf", .op = "all_gather",
			  .nhosts = 1, .per_host = 8};
	struct spec sr = {.binary = "./sendrecv_perf", .op = "sendrecv", .nhosts = 2,
			  .per_host = 1};
	cvc_nt_log log;

	read_spec(&ag, "ag.json", &log);
	cr_assert_str_eq(log.op, "all_gather");
	cr_assert_eq(log.nranks, 8);
	cr_assert_eq(log.gpus_per_node, 8);
	cr_assert_eq(log.nrows, 6);
	cr_assert_str_eq(log.rows[0].redop, "none");
	cr_assert(fabs(log.rows[5].busbw[0] - 0.875 * log.rows[5].algbw[0]) < 1e-5);
	cvc_nt_log_release(&log);
	read_spec(&sr, "sr.json", &log);
	cr_assert_str_eq(log.op, "sendrecv");
	cr_assert_eq(log.nranks, 2);
	cr_assert_eq(log.gpus_per_node, 1);
	cr_assert_eq(log.rows[2].busbw[1], log.rows[2].algbw[1]);
	cvc_nt_log_release(&log);
}

Test(ntjson, mpi_two_hosts_of_eight_processes)
{
	struct spec s = {.nhosts = 2, .per_host = 8};
	cvc_nt_log log;

	read_spec(&s, "mpi.json", &log);
	cr_assert_eq(log.nranks, 16);
	cr_assert_eq(log.gpus_per_node, 8);
	cr_assert(strstr(log.nranks_evidence, "16 device entries x 1 thread x 1 GPU"), "%s",
		  log.nranks_evidence);
	cr_assert(strstr(log.pn_evidence, "2 hosts"), "%s", log.pn_evidence);
	cr_assert_str_eq(log.gpu, "NVIDIA H200");
	cr_assert_str_eq(log.nccl_version, "2.27.3");
	cvc_nt_log_release(&log);
}

Test(ntjson, one_process_driving_eight_gpus)
{
	/* without MPI: one entry, its -g 8 GPUs are the ranks */
	struct spec s = {.more_args = ",\"-g\",\"8\"", .ngpus = 8};
	cvc_nt_log log;

	read_spec(&s, "g8.json", &log);
	cr_assert_eq(log.nranks, 8);
	cr_assert_eq(log.gpus_per_node, 8);
	cvc_nt_log_release(&log);
}

Test(ntjson, threads_and_gpus_of_each_process_count)
{
	/* 2 hosts x 2 processes, each -t 2 -g 2: 16 ranks, 8 a host */
	struct spec s = {.nhosts = 2, .per_host = 2, .nthreads = 2, .ngpus = 2};
	cvc_nt_log log;

	read_spec(&s, "tg.json", &log);
	cr_assert_eq(log.nranks, 16);
	cr_assert_eq(log.gpus_per_node, 8);
	cvc_nt_log_release(&log);
}

Test(ntjson, uneven_hosts_leave_the_node_size_unknown)
{
	struct spec s = {.binary = "./sendrecv_perf", .op = "sendrecv", .nhosts = 1, .per_host = 3};
	char *text, *p;
	const char *path;
	cvc_nt_log log;
	char err[512];

	text = doc(&s);
	/* the third entry on a host of its own: 2 + 1 */
	p = strstr(text, "\"hostname\":\"node0\",\"device\":2");
	cr_assert(p);
	p[16] = '1';
	path = put("uneven.json", text, strlen(text));
	free(text);
	read_as(path, &log, CVC_OK, err, sizeof err);
	cr_assert_eq(log.nranks, 3);
	cr_assert_eq(log.gpus_per_node, 0);
	cr_assert(strstr(log.pn_evidence, "unknown"), "%s", log.pn_evidence);
	cvc_nt_log_release(&log);
}

Test(ntjson, cpu_time_is_the_time)
{
	struct spec s = {.time_key = "cpu_time", .nhosts = 1, .per_host = 8};
	cvc_nt_log log;

	read_spec(&s, "cpu.json", &log);
	cr_assert_eq(log.nrows, 6);
	cr_assert(fabs(log.rows[0].time[0] - (10 + 1024 / 2e4)) < 1e-6, "%f", log.rows[0].time[0]);
	cr_assert(log.rows[0].time[1] > log.rows[0].time[0]);
	cvc_nt_log_release(&log);
}

Test(ntjson, nwrong_null_is_unknown_and_in_place_only_is_one_half)
{
	struct spec s = {.nwrong_null = 1, .oop_null = 1, .nhosts = 1, .per_host = 4};
	cvc_nt_log log;

	read_spec(&s, "ip.json", &log);
	cr_assert_eq(log.rows[0].nhalf, 1);
	cr_assert_eq(log.rows[0].in_place_only, 1);
	cr_assert_eq(log.rows[0].wrong[0], -1);
	/* the in-place time (1.01 x the generated one) in the one half */
	cr_assert(fabs(log.rows[0].time[0] - (10 + 1024 / 2e4) * 1.01) < 1e-6);
	cvc_nt_log_release(&log);
}

Test(ntjson, in_place_only_rows_are_stored_in_place)
{
	struct spec s = {.oop_null = 1, .nhosts = 1, .per_host = 4};
	char *text = doc(&s);
	const char *path = put("ip.json", text, strlen(text)), *paths[1] = {path};
	cvc_db *db = NULL;

	free(text);
	cr_assert_eq(cvc_db_open(tu_path(tu_tmpdir(), "t.db"), CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests WHERE in_place = 1"), 6);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests WHERE in_place = 0"), 0);
	cvc_db_close(db);
}

Test(ntjson, nccl_algo_from_env_else_args)
{
	struct spec env = {.env = "\"HOME=/root\",\"NCCL_ALGO=Tree\"",
			   .more_args = ",\"NCCL_ALGO=Ring\""};
	struct spec args = {.env = "\"MY_NCCL_ALGO=NVLS\"", .more_args = ",\"NCCL_ALGO=Ring\""};
	cvc_nt_log log;

	read_spec(&env, "env.json", &log);
	cr_assert_str_eq(log.algo, "Tree");
	cvc_nt_log_release(&log);
	read_spec(&args, "args.json", &log);
	cr_assert_str_eq(log.algo, "Ring");
	cvc_nt_log_release(&log);
}

Test(ntjson, gzip)
{
	struct spec s = {.nhosts = 2, .per_host = 8};
	char *text = doc(&s), err[512];
	const char *path = tu_path(tu_tmpdir(), "run.json.gz");
	gzFile gz = gzopen(path, "wb");
	cvc_nt_log log;

	cr_assert(gz);
	cr_assert_eq(gzwrite(gz, text, (unsigned)strlen(text)), (int)strlen(text));
	gzclose(gz);
	free(text);
	read_as(path, &log, CVC_OK, err, sizeof err);
	cr_assert_eq(log.nrows, 6);
	cr_assert_eq(log.nranks, 16);
	cvc_nt_log_release(&log);
}

Test(ntjson, a_file_cut_short_keeps_its_whole_results)
{
	struct spec s = {.nhosts = 2, .per_host = 8};
	char *text = doc(&s), err[512];
	char *third = strstr(text, "{\"size\":65536,");
	char *footer = strstr(text, "\"out_of_bounds\"");
	const char *path;
	cvc_nt_log log;

	cr_assert(third && footer);
	/* cut inside the fourth result (the run died there): three are whole */
	path = put("cut.json", text, (size_t)(third - text) + 40);
	read_as(path, &log, CVC_OK, err, sizeof err);
	cr_assert_eq(log.nrows, 3);
	cr_assert(strstr(log.incomplete, "may have stopped"), "%s", log.incomplete);
	cr_assert_eq(log.nranks, 16);
	cvc_nt_log_release(&log);
	/* cut in the footer: the sweep ended, every result is there */
	path = put("footer.json", text, (size_t)(footer - text) + 10);
	read_as(path, &log, CVC_OK, err, sizeof err);
	cr_assert_eq(log.nrows, 6);
	cr_assert_str_eq(log.incomplete, "");
	cvc_nt_log_release(&log);
	free(text);
}

Test(ntjson, a_file_cut_before_any_result_or_broken_names_the_byte)
{
	struct spec s = {0};
	char *text = doc(&s), err[512], want[600];
	char *res = strstr(text, "\"results\":[");
	const char *path;
	cvc_nt_log log;

	cr_assert(res);
	path = put("early.json", text, (size_t)(res - text) + 14);
	read_as(path, &log, CVC_ERR_FORMAT, err, sizeof err);
	snprintf(want, sizeof want, "'%s': byte %zu: the file ends before its first whole result",
		 path, (size_t)(res - text) + 14);
	cr_assert(strstr(err, want), "%s", err);
	cvc_nt_log_release(&log);
	/* a comma dropped between two results: json-c's offset of the error */
	res = strstr(text, "},{\"size\":4096");
	cr_assert(res);
	memmove(res + 1, res + 2, strlen(res + 2) + 1);
	path = put("broken.json", text, strlen(text));
	read_as(path, &log, CVC_ERR_FORMAT, err, sizeof err);
	snprintf(want, sizeof want, "'%s': byte %zu: expected JSON", path, (size_t)(res - text) + 1);
	cr_assert(strstr(err, want), "%s", err);
	cvc_nt_log_release(&log);
	free(text);
}

/* A copy of text with the first from replaced by to (malloc'd). */
static char *replaced(const char *text, const char *from, const char *to)
{
	const char *p = strstr(text, from);
	size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);

	cr_assert(p && out, "'%s' not in the document", from);
	snprintf(out, n, "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	return out;
}

Test(ntjson, untrusted_values_are_refused_with_where_and_what)
{
	static const struct {
		const char *from, *to, *where, *want;
	} cases[] = {
		{"\"size\":4096,", "\"size\":\"4096\",", "result 2: ", "field 'size': expected an integer > 0 (bytes), got \"4096\""},
		{"\"size\":4096,", "\"size\":-4096,", "result 2: ", "field 'size': expected an integer > 0"},
		{"\"size\":1024,", "\"size\":0,", "result 1: ", "field 'size': expected an integer > 0"},
		{"\"size\":1024,", "\"size\":1024.5,", "result 1: ", "got 1024.5"},
		{"\"out_of_place\":{\"time\":10.051200", "\"out_of_place\":{\"time\":0", "result 1: ", "field 'out_of_place.time': expected a number > 0 (us), got 0"},
		{"\"out_of_place\":{\"time\":10.051200", "\"out_of_place\":{\"time\":-3", "result 1: ", "field 'out_of_place.time': expected a number > 0"},
		{"\"out_of_place\":{\"time\":10.051200", "\"out_of_place\":{\"time\":\"nan\"", "result 1: ", "got \"nan\""},
		{"\"out_of_place\":{\"time\":10.051200", "\"out_of_place\":{\"time\":\"10\"", "result 1: ", "got \"10\""},
		{"\"type\":\"float\"", "\"type\":\"float32\"", "result 1: ", "field 'type': expected an NCCL data type"},
		{"\"type\":\"float\"", "\"type\":4", "result 1: ", "field 'type': expected a string, got 4"},
		{"\"root\":\"    -1\"", "\"root\":\"leader\"", "result 1: ", "field 'root': expected a rank as a string"},
		{"\"nwrong\":0.000000", "\"nwrong\":-1", "result 1: ", "field 'out_of_place.nwrong': expected a count >= 0"},
		{"\"in_place\":{", "\"in_place\":7,\"x\":{", "result 1: ", "field 'in_place': expected an object"},
		{"\"hostname\":\"node0\"", "\"hostname\":12", "", "field 'config.devices[0].hostname': expected a string, got 12"},
		{"\"nthreads\":1", "\"nthreads\":0", "", "field 'config.nthreads': expected an integer >= 1, got 0"},
		{"\"devices\":[", "\"devices\":[],\"x\":[", "", "field 'config.devices': expected a list of one entry per process"},
		{"\"args\":[", "\"args\":[3,", "", "field 'args[0]': expected a string"},
		{"\"nccl_version\":22703", "\"nccl_version\":\"2.27.3\"", "", "field 'nccl_version': expected an integer"},
		{"\"results\":[", "\"results\":[],\"x\":[", "", "field 'results': expected at least one result, got none"},
	};
	struct spec s = {.nhosts = 2, .per_host = 8};
	char *text = doc(&s);

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *bad = replaced(text, cases[i].from, cases[i].to), err[1024], want[1024];
		const char *path = put("bad.json", bad, strlen(bad));
		cvc_nt_log log;

		read_as(path, &log, CVC_ERR_FORMAT, err, sizeof err);
		snprintf(want, sizeof want, "'%s': %s", path, cases[i].where);
		cr_expect(strncmp(err, want, strlen(want)) == 0 && strstr(err, cases[i].want),
			  "case %zu: '%s', want '%s...%s'", i, err, want, cases[i].want);
		cvc_nt_log_release(&log);
		free(bad);
	}
	free(text);
}

Test(ntjson, bus_bandwidth_must_fit_the_rank_count)
{
	/* 16 device entries, results written for 8 ranks: 1.75 is not 1.875 */
	struct spec s = {.nhosts = 2, .per_host = 8, .factor_ranks = 8};
	char *text = doc(&s), err[1024];
	const char *path = put("ranks.json", text, strlen(text));
	cvc_nt_log log;

	free(text);
	read_as(path, &log, CVC_ERR_FORMAT, err, sizeof err);
	/* result 1's 0.1 GB/s are within the text's rounding of either factor */
	cr_assert(strstr(err, "ranks.json': result 2: field 'out_of_place.bus_bw': expected "
			      "alg_bw"), "%s", err);
	cr_assert(strstr(err, "1.8750"), "%s", err);
	cr_assert(strstr(err, "the all_reduce bus factor of 16 ranks (-J file: 16 device entries"),
		  "%s", err);
	cvc_nt_log_release(&log);
}

Test(ntjson, more_results_than_the_cap)
{
	/* the count is checked before any result is read */
	size_t n = (size_t)CVC_NT_MAX_ROWS + 1, len = n * 2;
	char *items = malloc(len), *text, err[1024];
	struct spec s = {0};
	const char *path;
	cvc_nt_log log;

	cr_assert(items);
	for (size_t i = 0; i < n; i++)
		memcpy(items + 2 * i, "0,", 2);
	items[len - 1] = '\0';
	s.results = items;
	text = doc(&s);
	path = put("many.json", text, strlen(text));
	free(text);
	free(items);
	read_as(path, &log, CVC_ERR_FORMAT, err, sizeof err);
	cr_assert(strstr(err, "many.json': field 'results': expected at most 1048576 results, got "
			      "1048577"), "%s", err);
	cvc_nt_log_release(&log);
}

Test(ntjson, other_json_is_not_an_nccl_tests_file)
{
	cvc_nt_log log;
	char err[512];
	const char *path = put("other.json", "{\"results\": [1, 2]}", 19);

	read_as(path, &log, CVC_ERR_NOTFOUND, err, sizeof err);
	cr_assert(strstr(err, "expected an nccl-tests log"), "%s", err);
	cvc_nt_log_release(&log);
}

Test(ntjson, import_sends_it_to_nccl_tests_and_kineto_stays_kineto)
{
	struct spec s = {.nhosts = 2, .per_host = 8};
	char *text = doc(&s), *kin, *env, *big, *out = NULL, *err = NULL, cmd[12800], fdb[4200];
	size_t klen = 0;
	const char *json = put("run.json", text, strlen(text)), *kpath, *bpath, *paths[1];
	cvc_format fmt;
	cvc_db *db = NULL;

	cr_assert_eq(cvc_import_detect(json, &fmt, NULL, 0), CVC_OK);
	cr_assert_eq(fmt, CVC_FMT_NCCL_TESTS);
	/* a Kineto trace with "config" and "results" inside an event is Kineto */
	kin = tu_read(CVC_SOURCE_DIR "/tests/fuzz/seeds/kineto/min.json", &klen);
	cr_assert(kin);
	big = replaced(kin, "\"args\": {}", "\"args\": {\"config\": {}, \"results\": []}");
	kpath = put("trace.json", big, strlen(big));
	cr_assert_eq(cvc_import_detect(kpath, &fmt, NULL, 0), CVC_OK);
	cr_assert_eq(fmt, CVC_FMT_KINETO);
	paths[0] = kpath;
	cr_assert_eq(cvc_db_open(tu_path(tu_tmpdir(), "k.db"), CVC_DB_CREATE, &db), CVC_OK);
	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sources WHERE format = 'kineto'"), 1);
	cvc_db_close(db);
	free(big);
	free(kin);
	/* an environment of 70 KB puts "config" past what detection reads:
	 * util.cu's first keys tell it; `cvc fit` reads the one long line */
	env = malloc(70010);
	cr_assert(env);
	memset(env, 'x', 70008);
	memcpy(env, "\"PATH=", 6);
	memcpy(env + 70007, "\"", 2);
	s.env = env;
	free(text);
	text = doc(&s);
	free(env);
	bpath = put("longenv.json", text, strlen(text));
	cr_assert_eq(cvc_import_detect(bpath, &fmt, NULL, 0), CVC_OK);
	cr_assert_eq(fmt, CVC_FMT_NCCL_TESTS);
	snprintf(fdb, sizeof fdb, "%s", tu_path(tu_tmpdir(), "f.db"));
	snprintf(cmd, sizeof cmd, "fit --db '%s' '%s' && '%s' models --db '%s' --format csv", fdb,
		 bpath, CVC_TOOL, fdb);
	cr_assert_eq(tu_cvc(cmd, &out, &err), 0, "%s", err);
	cr_assert(strstr(out, ",allreduce,16,8,6,"), "%s", out);
	free(out);
	free(err);
	free(text);
}

Test(ntjson, a_refused_file_leaves_the_database_as_it_was)
{
	struct spec good = {.nhosts = 2, .per_host = 8};
	struct spec bad = {.nhosts = 2, .per_host = 8, .factor_ranks = 4};
	char *g = doc(&good), *b = doc(&bad);
	const char *dir = tu_tmpdir(), *paths[1];
	char gp[4200], bp[4200];
	cvc_db *db = NULL;
	cvc_status st;

	snprintf(gp, sizeof gp, "%s", tu_path(dir, "good.json"));
	snprintf(bp, sizeof bp, "%s", tu_path(dir, "bad.json"));
	cr_assert_eq(tu_write(gp, g, strlen(g)), 0);
	cr_assert_eq(tu_write(bp, b, strlen(b)), 0);
	free(g);
	free(b);
	cr_assert_eq(cvc_db_open(tu_path(dir, "t.db"), CVC_DB_CREATE, &db), CVC_OK);
	paths[0] = gp;
	cr_assert_eq(cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL), CVC_OK, "%s",
		     cvc_db_errmsg(db));
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests"), 12);
	paths[0] = bp;
	st = cvc_import_files(db, paths, 1, tu_classifying(), NULL, NULL);
	cr_assert_eq(st, CVC_ERR_FORMAT);
	cr_assert_eq(cvc_exit_code(st), 2);
	cr_assert(strstr(cvc_db_errmsg(db), "bad.json': result 1: field 'out_of_place.bus_bw'"),
		  "%s", cvc_db_errmsg(db));
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM nccl_tests"), 12);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM runs"), 1);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM sources"), 1);
	cr_assert_eq(tu_db_int(db, "SELECT count(*) FROM run_meta WHERE key LIKE '%bad.json%'"), 0);
	cvc_db_close(db);
}

Test(ntjson, one_rank_moves_no_bus_bytes)
{
	/* all-reduce on one GPU: factor 0, nccl-tests prints busbw 0 */
	struct spec one = {0}, two = {.factor_ranks = 2};
	char *text = doc(&two), err[1024];
	const char *path;
	cvc_nt_log log;

	read_spec(&one, "one.json", &log);
	cr_assert_eq(log.nranks, 1);
	cr_assert_eq(log.rows[3].busbw[0], 0);
	cvc_nt_log_release(&log);
	path = put("two.json", text, strlen(text));
	free(text);
	read_as(path, &log, CVC_ERR_FORMAT, err, sizeof err);
	cr_assert(strstr(err, "the all_reduce bus factor of 1 ranks"), "%s", err);
	cvc_nt_log_release(&log);
}

Test(ntjson, op_of_an_unlisted_binary_or_from_the_columns)
{
	/* alltoallv's factor is its own: its bus bandwidth is not checked */
	struct spec v = {.binary = "./build/alltoallv_perf", .op = "sendrecv", .nhosts = 1,
			 .per_host = 4, .factor_ranks = 3};
	struct spec none = {.binary = "", .nhosts = 2, .per_host = 8};
	cvc_nt_log log;

	read_spec(&v, "v.json", &log);
	cr_assert_str_eq(log.op, "alltoallv");
	cvc_nt_log_release(&log);
	read_spec(&none, "none.json", &log);
	cr_assert_str_eq(log.op, "all_reduce");
	cr_assert(strstr(log.op_evidence, "inferred from columns"), "%s", log.op_evidence);
	cvc_nt_log_release(&log);
}
