/*
 * cmd_profile.c - `cvc profile -- CMD ARGS...`: runs a program under the
 * CUPTI injection library and leaves one cvc database per process in the
 * output directory (`cvc import DIR` merges them into one run).
 *
 * The library is loaded by the CUDA driver (CUDA_INJECTION64_PATH), so
 * launchers (torchrun, mpirun, srun) need no change and CUDA programs that
 * children exec are profiled too.  Each process writes a spool; once the
 * command exits this turns the spools of its own descendants into
 * databases, so the profiled program never pays for SQLite.  Builds
 * without CUDA: then it only says why it cannot profile.
 */
#define _GNU_SOURCE /* dlinfo, RTLD_DI_LINKMAP */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_base.h"
#include "cvc/cvc_profile.h"

static const char synopsis[] =
	"[-o DIR] [--activities LIST] [--delay S] [--duration S] [--run NAME] -- CMD [ARGS...]\n"
	"       cvc profile --materialize DIR   (turn spools left by killed processes into databases)";

#ifdef CVC_HAVE_CUPTI
static volatile sig_atomic_t child_pid;

/* SIGTERM to cvc goes to the program, which flushes and exits. */
static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static int find_inject(char *out, size_t cap)
{
	static const char *const rel[] = {"libcvc_inject.so", "../lib/cvc/libcvc_inject.so",
					  "../lib/libcvc_inject.so"};
	const char *env = getenv("CVC_INJECT_LIB");
	char dir[PATH_MAX];

	if (env && *env) {
		if (access(env, R_OK) != 0)
			return -1;
		return snprintf(out, cap, "%s", env) < (int)cap ? 0 : -1;
	}
	if (cli_self_dir(dir, sizeof dir))
		return -1;
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char p[PATH_MAX + 64];

		if (snprintf(p, sizeof p, "%s/%s", dir, rel[i]) >= (int)sizeof p)
			continue;
		if (access(p, R_OK) == 0 && realpath(p, out) && strlen(out) < cap)
			return 0;
	}
	return -1;
}

static int mkdirs(const char *path)
{
	char p[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof p)
		return -1;
	memcpy(p, path, n + 1);
	for (size_t i = 1; i < n; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return -1;
		p[i] = '/';
	}
	return (mkdir(p, 0755) != 0 && errno != EEXIST) ? -1 : 0;
}

#endif

/* Length of name[0..len) without a trailing ".p<digits>" (the parent part). */
static size_t strip_parent(const char *name, size_t len)
{
	size_t i = len;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i < len && i >= 2 && name[i - 1] == 'p' && name[i - 2] == '.')
		return i - 2;
	return len;
}

struct totals {
	int files, failed;
	int code;            /* the worst exit code of a failed spool */
	cvc_materialize_stats sum;
};

/*
 * Materializes the spools in dir whose name ends in suffix (".pPID.spool"
 * for our own descendants, ".spool" for --materialize): DB name = the
 * spool's name without the suffix, plus ".db".
 */
static int materialize_dir(const char *dir, const char *prefix, const char *suffix,
			   struct totals *t)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return cli_fail(cvc_open_status(errno), "profile: '%s': cannot open folder: %s", dir,
				strerror(errno));
	while ((e = readdir(d))) {
		char spool[PATH_MAX], db[PATH_MAX], err[1024];
		size_t base;
		cvc_materialize_stats st;

		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
		    !cvc_str_ends(e->d_name, suffix))
			continue;
		base = strlen(e->d_name) - strlen(suffix);
		base = strip_parent(e->d_name, base);
		if (snprintf(spool, sizeof spool, "%s/%s", dir, e->d_name) >= (int)sizeof spool ||
		    snprintf(db, sizeof db, "%s/%.*s.db", dir, (int)base, e->d_name) >=
			    (int)sizeof db)
			continue;
		{
			cvc_status ms = cvc_profile_materialize(spool, db, &st, err, sizeof err);

			if (ms != CVC_OK) {
				cli_say("error: profile: %s\n", err);
				t->failed++;
				/* a spool that is not one is bad input (exit 2), as elsewhere */
				if (cvc_exit_code(ms) > t->code)
					t->code = cvc_exit_code(ms);
				continue;
			}
		}
		unlink(spool);
		t->files++;
		t->sum.activities += st.activities;
		t->sum.ranges += st.ranges;
		t->sum.lost_records += st.lost_records;
		t->sum.devices += st.devices;
	}
	closedir(d);
	return 0;
}

#ifdef CVC_HAVE_CUPTI
/*
 * Why nothing was recorded.  The injection library is loaded by the CUDA
 * driver, so without a driver it never runs and only we can tell.
 */
static void explain_nothing(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!h) {
		fputs("cvc: no CUDA driver: libcuda.so.1 not found; nothing recorded\n", stderr);
		return;
	}
	dlclose(h);
	fputs("cvc: the program did not initialise CUDA, or CUPTI could not attach "
	      "(another profiler active?); nothing recorded\n", stderr);
}

static int run_child(char **cmd, int *status)
{
	struct sigaction sa, old_term, old_int, ign;
	pid_t pid;
	int st = 0;

	pid = fork();
	if (pid < 0)
		return cli_error("profile: fork: %s", strerror(errno));
	if (pid == 0) {
		execvp(cmd[0], cmd);
		cli_say("error: profile: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old_term);
	/* Ctrl-C reaches the whole process group: let the program flush, then we finish. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			st = 1 << 8;
			break;
		}
	}
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGINT, &old_int, NULL);
	child_pid = 0;
	if (WIFEXITED(st))
		*status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st))
		*status = 128 + WTERMSIG(st);
	else
		*status = 1;
	return 0;
}

/*
 * The libcupti the injection library will use, for NVTX_INJECTION64_PATH:
 * the one the dynamic linker resolves for it here (its RUNPATH,
 * LD_LIBRARY_PATH), not the path of the toolkit cvc was built on, which a
 * copied build may not have (issue 19 item 8).  Loading it runs nothing:
 * the driver calls InitializeInjection, not dlopen.  0 when found.
 */
static int find_cupti(const char *inject, char *out, size_t len)
{
	void *h = dlopen(inject, RTLD_LAZY | RTLD_LOCAL);
	struct link_map *lm = NULL;
	int rc = -1;

	if (!h)
		return -1;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0) {
		for (; lm; lm = lm->l_next) {
			const char *base = lm->l_name ? strrchr(lm->l_name, '/') : NULL;

			if (base && strncmp(base + 1, "libcupti.so", 11) == 0 &&
			    strlen(lm->l_name) < len) {
				memcpy(out, lm->l_name, strlen(lm->l_name) + 1);
				rc = 0;
				break;
			}
		}
	}
	/* not dlclose()d: libcupti allocates when loaded and frees nothing on
	 * unload (LeakSanitizer's finding); the parent only waits and merges */
	return rc;
}

static int set_env(const char *k, const char *v)
{
	if (setenv(k, v, 1) != 0)
		return cli_error("profile: setenv %s: %s", k, strerror(errno));
	return 0;
}

#endif

int cmd_profile(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *outdir = "cvc-profile", *acts = NULL, *run = NULL, *mat = NULL;
	double delay = 0, duration = 0;
	const struct cli_opt opts[] = {
		{"output", 'o', CLI_OUT, &outdir, "DIR", "directory for the per-process databases", NULL},
		{"activities", 0, CLI_STR, &acts, "LIST",
		 "kernel,memcpy,memset,nvtx,extcorr,runtime,driver,api,default,all", NULL},
		{"delay", 0, CLI_DOUBLE, &delay, "S", "start recording after S seconds", NULL},
		{"duration", 0, CLI_DOUBLE, &duration, "S", "record for S seconds only", NULL},
		{"run", 0, CLI_STR, &run, "NAME", "run name shared by all ranks (default: DIR's name)", NULL},
		{"materialize", 0, CLI_PATH, &mat, "DIR", "turn leftover spools in DIR into databases", NULL},
		{0},
	};
	char lib[PATH_MAX], dir[PATH_MAX], buf[64], suffix[96], err[256];
	char host[256] = "", prefix[300];
	unsigned mask = CVC_PROF_DEFAULT;
	struct totals t = {0};
	int npos = 0, rest = argc, rc, status = 0, made = 0;

	(void)ctx;
	rc = cli_parse("profile", synopsis, opts, argc, argv, &npos, &rest);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (mat) {
		if ((rc = materialize_dir(mat, "cvc-", ".spool", &t)))
			return rc;
		cli_say("cvc: %d spool(s) turned into databases in '%s'\n", t.files, mat);
		return t.failed ? t.code : 0;
	}
	/* -o names a folder: a file there is refused before anything runs */
	{
		struct stat sb;

		if (stat(outdir, &sb) == 0 && !S_ISDIR(sb.st_mode))
			return cli_error("profile: -o '%s': is not a folder (expected a folder for the "
					 "per-process databases, or a new name)", outdir);
	}
	if (rest >= argc || npos)
		return cli_error("profile: expected '--' and a command, e.g. 'cvc profile -- ./train'");
	if (delay < 0 || duration < 0)
		return cli_error("profile: --delay and --duration must not be negative");
	if (acts && cvc_profile_parse_activities(acts, &mask, err, sizeof err))
		return cli_error("profile: --activities: %s", err);
#ifndef CVC_HAVE_CUPTI
	(void)lib;
	(void)dir;
	(void)buf;
	(void)host;
	(void)prefix;
	(void)suffix;
	(void)status;
	(void)made;
#ifndef CVC_NO_CUPTI_WHY
#define CVC_NO_CUPTI_WHY "this cvc was built without the CUDA toolkit"
#endif
	/* Exit 2: like bad usage, the request cannot be met by this build. */
	return cli_error("profile: %s; nothing recorded", CVC_NO_CUPTI_WHY);
#else
	if (find_inject(lib, sizeof lib))
		return cli_error("profile: libcvc_inject.so not found next to the cvc binary "
				 "(set CVC_INJECT_LIB); nothing recorded");
	made = access(outdir, F_OK) != 0;
	if (mkdirs(outdir) || !realpath(outdir, dir))
		return cli_error("profile: cannot create '%s': %s", outdir, strerror(errno));
	if (!run) {
		run = strrchr(dir, '/');
		run = run && run[1] ? run + 1 : dir;
	}
	snprintf(buf, sizeof buf, "%ld", (long)getpid());
	/* The driver loads one injection library: another tool's (Nsight
	 * Systems launching cvc, a profiling wrapper) is replaced, so that tool
	 * records no CUDA activity in this run.  Said, not silently done. */
	const char *prev_inj = getenv("CUDA_INJECTION64_PATH");
	if (prev_inj && *prev_inj && strcmp(prev_inj, lib) != 0)
		cli_say("cvc: CUDA_INJECTION64_PATH was '%s' (another tool's CUDA "
			"injection): cvc replaces it, so that tool records no CUDA activity in "
			"this run; profile with one tool at a time\n", prev_inj);
	if (set_env("CUDA_INJECTION64_PATH", lib) || set_env(CVC_ENV_OUTDIR, dir) ||
	    set_env(CVC_ENV_RUN, run) || set_env(CVC_ENV_PARENT, buf) ||
	    (acts && set_env(CVC_ENV_ACTIVITIES, acts)))
		return 2;
	/* NCCL (>= 2.28) loads the same library as its profiler plugin: collective sizes. */
	if (!getenv("NCCL_PROFILER_PLUGIN") && set_env("NCCL_PROFILER_PLUGIN", lib))
		return 2;
	/* NVTX ranges reach CUPTI only through its NVTX injection; keep a user's own. */
	if ((mask & CVC_PROF_NVTX) && !getenv("NVTX_INJECTION64_PATH")) {
		char cupti[PATH_MAX];

		if (find_cupti(lib, cupti, sizeof cupti) != 0) {
			if (access(CVC_CUPTI_LIB, R_OK) != 0) {
				cli_say("cvc: libcupti not found (built with '%s'); NVTX "
					"ranges will not be recorded\n", CVC_CUPTI_LIB);
				cupti[0] = '\0';
			} else {
				snprintf(cupti, sizeof cupti, "%s", CVC_CUPTI_LIB);
			}
		}
		if (cupti[0] && set_env("NVTX_INJECTION64_PATH", cupti))
			return 2;
	}
	if (delay > 0) {
		char v[64];

		snprintf(v, sizeof v, "%.9g", delay);
		if (set_env(CVC_ENV_DELAY, v))
			return 2;
	}
	if (duration > 0) {
		char v[64];

		snprintf(v, sizeof v, "%.9g", duration);
		if (set_env(CVC_ENV_DURATION, v))
			return 2;
	}
	fflush(NULL);
	if ((rc = run_child(argv + rest, &status)))
		return rc;
	/* Only our own descendants' spools: DIR may be shared by many ranks and hosts. */
	gethostname(host, sizeof host - 1);
	for (char *p = host; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	snprintf(prefix, sizeof prefix, "cvc-%s-", host);
	snprintf(suffix, sizeof suffix, ".p%s.spool", buf);
	if ((rc = materialize_dir(dir, prefix, suffix, &t)))
		return rc;
	/* a folder this run made and left empty (a program that did not
	 * start, nothing recorded) is not left behind */
	if (made && t.files == 0 && t.failed == 0)
		rmdir(dir);
	if (t.files == 0 && t.failed == 0)
		explain_nothing();
	else
		cli_say(
			"cvc: %d process(es) recorded: %lld activities, %lld ranges, %lld lost "
			"records -> '%s' (merge with 'cvc import %s')\n",
			t.files, (long long)t.sum.activities, (long long)t.sum.ranges,
			(long long)t.sum.lost_records, dir, dir);
	if (t.failed && status == 0)
		return 1;
	return status;
#endif
}
