/*
 * cmd_calibrate.c - `cvc calibrate [SCENARIOS.yaml]`: plan the
 * microbenchmarks a study needs (--plan: no GPU needed), or run them with
 * cvc_calibrate_run (one process per local GPU, or one per rank under
 * mpirun/srun) and fit the results into the database (docs/CALIBRATE.md).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_calibrate.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "cvc/cvc_out.h"
#include "cvc/cvc_project.h"

/* an integer option left out (0 and negatives are refused, not defaulted) */
#define NOT_GIVEN LLONG_MIN

static const char synopsis[] = "[SCENARIOS.yaml] [--plan] [--csv FILE] [--gpus N] [--db PATH]";

#define MAX_FIT_FILES 512

/*
 * GPUs the driver sees: -1 with *why set when there is no usable driver.
 * The driver is loaded at run time so the tool builds and runs without
 * CUDA; this is the same check the runner repeats with the runtime API.
 */
static int probe_gpus(char *why, size_t cap)
{
	typedef int (*init_fn)(unsigned);
	typedef int (*count_fn)(int *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	init_fn cu_init;
	count_fn cu_count;
	int n = 0, rc;

	if (!h) {
		const char *e = dlerror();

		snprintf(why, cap, "cannot load the CUDA driver (%s)", e ? e : "libcuda.so.1");
		return -1;
	}
	*(void **)&cu_init = dlsym(h, "cuInit");
	*(void **)&cu_count = dlsym(h, "cuDeviceGetCount");
	if (!cu_init || !cu_count) {
		snprintf(why, cap, "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
		n = -1;
	} else if ((rc = cu_init(0)) != 0) {
		snprintf(why, cap, "cuInit failed with CUDA error %d (no GPU or driver)", rc);
		n = -1;
	} else if ((rc = cu_count(&n)) != 0 || n < 1) {
		snprintf(why, cap, "the CUDA driver sees no GPU");
		n = -1;
	}
	dlclose(h);
	return n;
}

static int find_runner(char *out, size_t cap)
{
	char dir[PATH_MAX];
	int n;

	if (cli_self_dir(dir, sizeof dir))
		return -1;
	n = snprintf(out, cap, "%s/cvc_calibrate_run", dir);
	if (n < 0 || (size_t)n >= cap || access(out, X_OK))
		return -1;
	return 0;
}

static void print_plan(FILE *f, const char *study, const cvc_cal_opts *o,
		       const cvc_cal_summary *s)
{
	uint64_t te = 0, tp = 0;

	fprintf(f, "calibration plan for study '%s': %llu valid scenarios\n", study,
		(unsigned long long)s->scenarios);
	fprintf(f, "measured on %d GPU%s (%d per node); estimates for %s, %d warm-up + %d timed "
		"runs per shape\n", o->gpus, o->gpus == 1 ? "" : "s", o->gpus_per_node, o->gpu,
		o->warmup, o->reps);
	fprintf(f, "%-12s %10s %10s\n", "kind", "exact", "planned");
	for (int k = 0; k < CVC_CAL_NKIND; k++) {
		fprintf(f, "%-12s %10llu %10llu\n", cvc_cal_kind_name(k),
			(unsigned long long)s->exact[k], (unsigned long long)s->planned[k]);
		te += s->exact[k];
		tp += s->planned[k];
	}
	fprintf(f, "%-12s %10llu %10llu\n", "total", (unsigned long long)te,
		(unsigned long long)tp);
	if (s->unmeasurable)
		fprintf(f, "not measurable on %d GPU%s: %llu exact collective shapes span more nodes "
			"(they keep the default model; calibrate on more nodes with --gpus)\n",
			o->gpus, o->gpus == 1 ? "" : "s", (unsigned long long)s->unmeasurable);
	fprintf(f, "calibration: %.1f GPU-seconds (%.3f GPU-hours)\n", s->calib_gpu_s,
		s->calib_gpu_s / 3600);
	fprintf(f, "full workloads: %.1f GPU-seconds (%.1f GPU-hours; %d steps x step time x "
		"GPUs, every scenario)\n", s->full_gpu_s, s->full_gpu_s / 3600, o->steps);
	fprintf(f, "profiling cost reduction: %.0fx (Pati et al. report 2100x)\n", s->factor);
}

/* rank/size of this process under mpirun or srun; 0 when not launched so */
static int launched_size(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long n;

		if (!v)
			continue;
		n = strtol(v, &end, 10);
		if (end != v && !*end && n > 1)
			return (int)n;
	}
	return 0;
}

/* Runs `ngpu` local runner processes; returns the exit code to use. */
static int run_local(const char *runner, const char *plan, const char *outdir, int ngpu,
		     int warmup, int reps)
{
	pid_t *pids = calloc((size_t)ngpu, sizeof *pids);
	char wu[16], rp[16];
	int rc = 0;

	if (!pids)
		return cli_fail(CVC_ERR_NOMEM, "calibrate: out of memory");
	snprintf(wu, sizeof wu, "%d", warmup);
	snprintf(rp, sizeof rp, "%d", reps);
	for (int r = 0; r < ngpu; r++) {
		pid_t p = fork();

		if (p < 0) {
			rc = cli_fail(CVC_ERR_IO, "calibrate: fork: %s", strerror(errno));
			break;
		}
		if (p == 0) {
			char rank[16], size[16];

			snprintf(rank, sizeof rank, "%d", r);
			snprintf(size, sizeof size, "%d", ngpu);
			setenv("CVC_CAL_RANK", rank, 1);
			setenv("CVC_CAL_NRANKS", size, 1);
			setenv("CVC_CAL_LOCAL_RANK", rank, 1);
			setenv("CVC_CAL_LOCAL_SIZE", size, 1);
			execl(runner, runner, "--plan", plan, "--out", outdir, "--warmup", wu, "--reps",
			      rp, (char *)NULL);
			cli_say("error: calibrate: '%s': %s\n", runner, strerror(errno));
			_exit(1);
		}
		pids[r] = p;
	}
	for (int r = 0; r < ngpu; r++) {
		int status;

		if (!pids[r])
			continue;
		if (waitpid(pids[r], &status, 0) < 0) {
			rc = 1;
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;

			if (!rc)
				rc = code == 2 ? 2 : 1;
		}
	}
	free(pids);
	return rc;
}

/* Removes a previous run's tables (the runner appends to collective logs). */
static void clean_outputs(const char *outdir)
{
	static const char *const pre[] = {"nccl_", "gemm.r", "attention.r", "membound.r",
					  "nccl.id"};
	DIR *d = opendir(outdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
			char path[PATH_MAX];
			int n;

			if (strncmp(e->d_name, pre[i], strlen(pre[i])) != 0)
				continue;
			n = snprintf(path, sizeof path, "%s/%s", outdir, e->d_name);
			if (n > 0 && (size_t)n < sizeof path)
				unlink(path);
			break;
		}
	}
	closedir(d);
}

/* The runner's tables in outdir, in directory order: gemm tables (XLA
 * matmul format) and nccl-tests format logs.  *paths is malloc'd, as is
 * each path.  Returns an exit code. */
static int list_tables(const char *outdir, char ***paths, int *n)
{
	DIR *d = opendir(outdir);
	struct dirent *e;
	char **v;

	*paths = NULL;
	*n = 0;
	if (!d)
		return cli_fail(CVC_ERR_IO, "calibrate: '%s': %s", outdir, strerror(errno));
	v = calloc(MAX_FIT_FILES, sizeof *v);
	if (!v) {
		closedir(d);
		return cli_fail(CVC_ERR_NOMEM, "calibrate: out of memory");
	}
	*paths = v;
	while ((e = readdir(d)) && *n < MAX_FIT_FILES) {
		if ((strncmp(e->d_name, "gemm.", 5) == 0 && cvc_str_ends(e->d_name, ".csv")) ||
		    (strncmp(e->d_name, "nccl_", 5) == 0 && cvc_str_ends(e->d_name, ".txt"))) {
			size_t len = strlen(outdir) + strlen(e->d_name) + 2;
			char *p = malloc(len);

			if (p)
				snprintf(p, len, "%s/%s", outdir, e->d_name);
			v[(*n)++] = p;
		}
	}
	closedir(d);
	for (int i = 0; i < *n; i++)
		if (!v[i])
			return cli_fail(CVC_ERR_NOMEM, "calibrate: out of memory");
	return 0;
}

static void print_warning(void *arg, const char *warning)
{
	(void)arg;
	cli_say("warning: %s\n", warning);
}

/* Reads the tables and fits them into db in one transaction, as
 * `cvc fit --db DB TABLES...` does.  Returns an exit code. */
static int fit_tables(char *const *paths, int n, const char *db_path)
{
	cvc_hw_catalog *cat = NULL;
	cvc_model_rows *per = NULL;
	cvc_model_fit_set *sets = NULL;
	cvc_db *db = NULL;
	cvc_status st;
	char err[1024];
	int rc = 0, nfit = 0;

	if ((st = cvc_hw_catalog_new(&cat))) {
		rc = cli_fail(st, "%s", cvc_hw_catalog_errmsg(cat));
		goto out;
	}
	per = calloc((size_t)n, sizeof *per);
	sets = calloc((size_t)n, sizeof *sets);
	if (!per || !sets) {
		rc = cli_fail(CVC_ERR_NOMEM, "fit: out of memory");
		goto out;
	}
	/* tables first: a bad one must leave the database untouched */
	for (int i = 0; i < n; i++)
		if ((st = cvc_model_rows_read(&per[i], paths[i], NULL, err, sizeof err))) {
			rc = cli_fail(st, "%s", err);
			goto out;
		}
	if ((st = cvc_db_open(db_path, CVC_DB_CREATE | CVC_DB_DISCARD, &db))) {
		rc = cli_fail(st, "%s", db ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	for (int i = 0; i < n; i++)
		sets[i] = (cvc_model_fit_set){&per[i], 6};
	if ((st = cvc_model_fit_sets(db, cat, sets, (size_t)n, stdout, print_warning, NULL, &nfit,
				     err, sizeof err))) {
		rc = cli_fail(st, "%s", err);
		goto out;
	}
	if (!nfit)
		rc = cli_error("fit: no group had enough rows to fit a model");
	else
		cli_say("fit: %d model%s stored in '%s'\n", nfit, nfit == 1 ? "" : "s",
			db_path);
out:
	free(sets);
	for (int i = 0; per && i < n; i++)
		cvc_model_rows_release(&per[i]);
	free(per);
	cvc_db_close(db);
	cvc_hw_catalog_free(cat);
	return rc;
}

/* Fits the runner's tables in outdir into db. */
static int fit_outputs(const char *outdir, const char *db_path)
{
	char **paths = NULL;
	int n = 0, rc;

	if ((rc = list_tables(outdir, &paths, &n)))
		goto out;
	if (n == 0) {
		rc = cli_error("calibrate: '%s' holds no measured tables", outdir);
		goto out;
	}
	cli_say("calibrate: fitting %d table%s into '%s'\n", n, n == 1 ? "" : "s",
		db_path);
	rc = fit_tables(paths, n, db_path);
out:
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

/*
 * Before measuring: the GPUs visible (or the ranks launched under
 * mpirun/srun, *nlaunch), the runner beside the binary (into runner), and
 * *gpus defaulted to them.  Returns an exit code.
 */
static int check_gpus(long long *gpus, int *nlaunch, char *runner, size_t cap)
{
	char why[256];
	int ngpu;

	*nlaunch = launched_size();
	ngpu = probe_gpus(why, sizeof why);
	if (ngpu < 0)
		return cli_error("calibrate: no GPU here: %s; 'cvc calibrate --plan' works "
				 "without one", why);
#ifndef CVC_HAVE_CAL_RUNNER
	return cli_error("calibrate: this cvc was built without nvcc, cuBLASLt and NCCL: "
			 "cvc_calibrate_run is missing; rebuild with the CUDA toolkit");
#endif
	if (find_runner(runner, cap))
		return cli_error("calibrate: cvc_calibrate_run not found next to the cvc binary");
	if (!*gpus)
		*gpus = *nlaunch ? *nlaunch : ngpu;
	if (!*nlaunch && *gpus > ngpu)
		return cli_error("calibrate: --gpus %lld: only %d GPU%s visible here (more "
				 "nodes: run under mpirun or srun)", *gpus, ngpu,
				 ngpu == 1 ? "" : "s");
	return 0;
}

/* Writes the plan as CSV to path ('-': stdout, then *to_stdout is set),
 * replaced through cvc_out.  Returns an exit code. */
static int write_plan_csv(const cvc_cal_plan *plan, const char *path, int *to_stdout)
{
	cvc_out *o = NULL;
	char err[1024];
	cvc_status st;

	*to_stdout = strcmp(path, "-") == 0;
	if ((st = cvc_out_open(path, &o, err, sizeof err)))
		return cli_fail(st, "%s", err);
	cvc_cal_plan_write_csv(plan, cvc_out_file(o));
	if ((st = cvc_out_commit(o, err, sizeof err)))
		return cli_fail(st, "%s", err);
	return 0;
}

/*
 * Measures the plan: writes it to outdir/plan.csv, runs the runner (one
 * process per local GPU, or becomes it when launched under mpirun/srun)
 * and fits the tables it wrote into db_path.  Returns an exit code.
 */
static int measure(const cvc_cal_plan *plan, const cvc_cal_opts *o, const char *runner,
		   int nlaunch, const char *outdir, const char *db_path)
{
	char planpath[PATH_MAX];
	int r, ret, created, dash;
	cvc_status st;

	if ((st = cvc_out_dir(outdir, &created, planpath, sizeof planpath)))
		return cli_fail(st, "calibrate: %s", planpath);
	if (!nlaunch)
		clean_outputs(outdir);
	r = snprintf(planpath, sizeof planpath, "%s/plan.csv", outdir);
	if (r < 0 || (size_t)r >= sizeof planpath)
		return cli_error("calibrate: --out: path too long");
	if ((ret = write_plan_csv(plan, planpath, &dash)))
		return ret;
	fflush(stdout);
	if (nlaunch) {
		/* one rank per process under mpirun/srun: become the runner;
		 * `cvc fit` runs afterwards on the tables (docs/CALIBRATE.md) */
		char wu[16], rp[16];

		snprintf(wu, sizeof wu, "%d", o->warmup);
		snprintf(rp, sizeof rp, "%d", o->reps);
		execl(runner, runner, "--plan", planpath, "--out", outdir, "--warmup", wu, "--reps", rp,
		      (char *)NULL);
		return cli_fail(CVC_ERR_IO, "calibrate: '%s': %s", runner, strerror(errno));
	}
	if ((ret = run_local(runner, planpath, outdir, o->gpus, o->warmup, o->reps)))
		return ret;
	return fit_outputs(outdir, db_path);
}

int cmd_calibrate(int argc, char **argv, struct cvc_ctx *cctx)
{
	const char *csv_path = NULL, *db_path = CVC_DEFAULT_DB, *gpu = NULL, *outdir = "calibrate.out";
	long long gpus = NOT_GIVEN, gpn = NOT_GIVEN, reps = 20, warmup = 5, steps = 10;
	int plan_only = 0, npos = 0, ret = 1, r;
	const struct cli_opt opts[] = {
		{"plan", 0, CLI_FLAG, &plan_only, NULL, "print what would be measured and its cost; no GPU needed", NULL},
		{"csv", 0, CLI_OUT, &csv_path, "FILE", "also write the plan as CSV ('-' = stdout)", NULL},
		{"gpus", 0, CLI_INT, &gpus, "N", "GPUs to calibrate on (default: the GPUs visible, 8 with --plan)", NULL},
		{"gpus-per-node", 0, CLI_INT, &gpn, "G", "of those, per node (default min(N, 8))", NULL},
		{"gpu", 0, CLI_STR, &gpu, "NAME", "GPU the --plan estimate is for (default H100-SXM)", NULL},
		{"reps", 0, CLI_INT, &reps, "N", "timed runs per shape (default 20)", NULL},
		{"warmup", 0, CLI_INT, &warmup, "N", "untimed runs per shape (default 5)", NULL},
		{"steps", 0, CLI_INT, &steps, "N", "steps a full-workload profile runs (default 10)", NULL},
		{"db", 0, CLI_PATH, &db_path, "PATH", "database the fits go into (default " CVC_DEFAULT_DB ")", NULL},
		{"out", 0, CLI_OUT, &outdir, "DIR", "where the measured tables go (default calibrate.out)", NULL},
		{0},
	};
	cvc_cal_opts o;
	cvc_cal_plan *plan = NULL;
	cvc_cal_summary sum;
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *pctx = NULL;
	cvc_status rc;
	char runner[PATH_MAX];
	int nlaunch = 0, csv_stdout = 0;
	uint64_t seen;

	r = cli_parse_seen(cctx->cmd, synopsis, opts, argc, argv, &npos, NULL, &seen);
	if (r)
		return r < 0 ? 0 : r;
	/* --plan measures and fits nothing: a database or folder given with it
	 * was dropped without a word */
	for (int i = 0; plan_only && i < 64 && opts[i].lname; i++)
		if ((seen >> i & 1) && (strcmp(opts[i].lname, "db") == 0 ||
					strcmp(opts[i].lname, "out") == 0))
			return cli_error("calibrate: --%s does not apply with --plan (nothing is "
					 "measured or fitted); drop --plan to measure", opts[i].lname);
	if (npos > 1)
		return cli_error("calibrate: expected at most one scenario file");
	/* 0 read as "the default" before: said, not guessed */
	if (gpus != NOT_GIVEN && (gpus < 1 || gpus > 1 << 20))
		return cli_error("calibrate: --gpus: expected 1..2^20, got %lld", gpus);
	if (gpn != NOT_GIVEN && (gpn < 1 || gpn > 1024))
		return cli_error("calibrate: --gpus-per-node: expected 1..1024, got %lld", gpn);
	gpus = gpus == NOT_GIVEN ? 0 : gpus;
	gpn = gpn == NOT_GIVEN ? 0 : gpn;
	if (reps < 1 || reps > 100000 || warmup < 0 || warmup > 100000 || steps < 1 ||
	    steps > 1000000)
		return cli_error("calibrate: expected --reps 1..100000, --warmup 0..100000, "
				 "--steps 1..1000000");
	/* no GPU: one line, exit 2, before any work */
	if (!plan_only && (r = check_gpus(&gpus, &nlaunch, runner, sizeof runner)))
		return r;
	cvc_cal_opts_default(&o);
	if (gpus)
		o.gpus = (int)gpus;
	o.gpus_per_node = gpn ? (int)gpn : (o.gpus < 8 ? o.gpus : 8);
	if (!plan_only && !nlaunch)
		o.gpus_per_node = o.gpus; /* local: one node */
	if (o.gpus_per_node > o.gpus)
		return cli_error("calibrate: --gpus-per-node %d exceeds --gpus %d", o.gpus_per_node,
				 o.gpus);
	if (gpu)
		o.gpu = gpu;
	o.reps = (int)reps;
	o.warmup = (int)warmup;
	o.steps = (int)steps;

	rc = npos == 1 ? cvc_proj_study_load(argv[1], &st) : cvc_proj_study_default(&st);
	if (rc) {
		ret = cli_fail(rc, "%s", st ? cvc_proj_study_errmsg(st) : cvc_strerror(rc));
		goto out;
	}
	if ((rc = cvc_proj_ctx_new(NULL, &pctx))) {
		ret = cli_fail(rc, "%s", pctx ? cvc_proj_ctx_errmsg(pctx) : cvc_strerror(rc));
		goto out;
	}
	if ((rc = cvc_cal_plan_new(&o, &plan)) || (rc = cvc_cal_plan_study(plan, st, pctx))) {
		ret = cli_fail(rc, "%s", plan ? cvc_cal_plan_errmsg(plan) : cvc_strerror(rc));
		goto out;
	}
	cvc_cal_plan_summary(plan, &sum);
	if (!sum.scenarios) {
		ret = cli_error("calibrate: study '%s' has no valid scenario",
				cvc_proj_study_name(st));
		goto out;
	}
	if (csv_path && (ret = write_plan_csv(plan, csv_path, &csv_stdout)))
		goto out;
	print_plan(csv_stdout ? stderr : stdout, cvc_proj_study_name(st), &o, &sum);
	if (plan_only) {
		ret = 0;
		goto out;
	}
	ret = measure(plan, &o, runner, nlaunch, outdir, db_path);
out:
	cvc_cal_plan_free(plan);
	cvc_proj_ctx_free(pctx);
	cvc_proj_study_free(st);
	return ret;
}
