/*
 * cmd_fit.c - `cvc fit`: read measured tables (XLA perf tables, vidur
 * profiles, nccl-tests logs) or the db's collectives and nccl_tests rows
 * and the GEMM and memory-bound ops of traces recorded with shapes, fit one
 * model per (GPU, dtype) for GEMMs, per (GPU, class) for memory-bound ops
 * and per (system, collective, group size, node size) for collectives, and
 * store them in the db.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"

static const char synopsis[] =
	"[--db PATH] [--gpu NAME] [--system NAME] [--catalog FILE] [SOURCES...]";

static void print_warning(void *arg, const char *warning)
{
	(void)arg;
	cli_say("warning: %s\n", warning);
}

static void label_rows(const cvc_hw_catalog *cat, cvc_model_rows *rows, const char *gpu,
		       const char *system)
{
	for (size_t i = 0; i < rows->n; i++) {
		cvc_model_row *r = &rows->v[i];

		if (gpu && !cvc_hw_catalog_lookup(cat, r->gpu) &&
		    !(r->system[0] && cvc_hw_catalog_lookup(cat, r->system)))
			snprintf(r->gpu, sizeof r->gpu, "%s", gpu);
		if (system && r->kind == CVC_MODEL_COLLECTIVE)
			snprintf(r->system, sizeof r->system, "%s", system);
	}
}

/* The memory-bound row sets of the traced runs, after the GEMM ones. */
static cvc_status add_membound_sets(cvc_db *db, cvc_model_rows **sets, size_t *n)
{
	cvc_model_rows *mem = NULL, *all;
	size_t nmem = 0;
	cvc_status st;

	if ((st = cvc_model_membound_rows_from_traces(db, &mem, &nmem)) || !nmem)
		return st;
	all = realloc(*sets, (*n + nmem) * sizeof *all);
	if (!all) {
		for (size_t i = 0; i < nmem; i++)
			cvc_model_rows_release(&mem[i]);
		free(mem);
		return CVC_ERR_NOMEM;
	}
	memcpy(all + *n, mem, nmem * sizeof *mem);
	free(mem);
	*sets = all;
	*n += nmem;
	return CVC_OK;
}

int cmd_fit(int argc, char **argv, struct cvc_ctx *ctx)
{
	const char *dbpath = CVC_DEFAULT_DB, *gpu = NULL, *catalog = NULL, *system = NULL;
	double max_inflate = CVC_GZ_MAX_INFLATE;
	int npos = 0, rc = 0;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_PATH, &dbpath, "PATH", "database (default " CVC_DEFAULT_DB ")", NULL},
		{"gpu", 0, CLI_STR, &gpu, "NAME",
		 "GPU of sources (and imported rows) whose GPU is not named or not in the catalog",
		 NULL},
		{"system", 0, CLI_STR, &system, "NAME",
		 "catalog system the collective logs were measured on (its NICs place them on the "
		 "topology)", NULL},
		{"catalog", 0, CLI_PATH, &catalog, "FILE", "extra hardware catalog entries (CSV)", NULL},
		{"max-inflate", 0, CLI_DOUBLE, &max_inflate, "N",
		 "refuse gzip input that expands more than N times (default 100; 0: no limit)", NULL},
		{0},
	};
	cvc_hw_catalog *cat = NULL;
	cvc_db *db = NULL;
	cvc_model_rows *per = NULL, *traces = NULL;
	size_t ntraces = 0, ntrace_rows = 0, nsets = 0;
	cvc_model_fit_set *sets = NULL;
	const cvc_hw_spec *gspec = NULL;
	cvc_status st;
	char err[1024];
	int nfit = 0, nsrc = 0;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = 0;
	if (max_inflate < 0)
		return cli_error("fit: --max-inflate: expected 0 (no limit) or more, got %g",
				 max_inflate);
	cvc_gz_set_max_inflate(max_inflate);
	if ((st = cvc_hw_catalog_new(&cat)) || (catalog && (st = cvc_hw_catalog_load(cat, catalog)))) {
		rc = cli_fail(st, "%s", cvc_hw_catalog_errmsg(cat));
		goto out;
	}
	if (gpu && (rc = cli_hw_find("fit", cat, "--gpu", gpu, "gpu", &gspec)))
		goto out;
	if (gspec)
		gpu = gspec->name; /* rows name the catalog's GPU, not the alias typed */
	if (system) {
		const cvc_hw_spec *sys = NULL;

		if ((rc = cli_hw_find("fit", cat, "--system", system, "system", &sys)))
			goto out;
		if (gpu && strcmp(gspec->name, sys->base) != 0) {
			rc = cli_error("fit: --system '%s' is built of %s, not of --gpu '%s'", system,
				       sys->base, gpu);
			goto out;
		}
	}
	/* one row set per source, so each fit names the file it came from */
	nsrc = npos ? npos : 1;
	per = calloc((size_t)nsrc, sizeof *per);
	if (!per) {
		rc = cli_fail(CVC_ERR_NOMEM, "fit: out of memory");
		goto out;
	}
	/* sources first: a bad file must leave the database untouched */
	for (int i = 0; i < npos; i++) {
		struct stat sb;

		/* a folder is a usage error, as `cvc project DIR` says (it was a
		   read error, exit 1) */
		if (stat(argv[i + 1], &sb) == 0 && S_ISDIR(sb.st_mode)) {
			rc = cli_error("fit: '%s' is a folder: fit reads files (measured tables, "
				       "nccl-tests logs); give them, e.g. '%s'/*.txt", argv[i + 1],
				       argv[i + 1]);
			goto out;
		}
		if ((st = cvc_model_rows_read(&per[i], argv[i + 1], gpu, err, sizeof err))) {
			rc = cli_fail(st, "%s", err);
			goto out;
		}
	}
	st = cvc_db_open(dbpath, CVC_DB_CREATE | CVC_DB_DISCARD, &db);
	if (st) {
		rc = cli_fail(st, "%s", db ? cvc_db_errmsg(db) : cvc_strerror(st));
		goto out;
	}
	if (!npos && (st = cvc_model_rows_from_db(&per[0], db))) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	if (!npos && ((st = cvc_model_rows_from_traces(db, &traces, &ntraces)) ||
		      (st = add_membound_sets(db, &traces, &ntraces)))) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	for (size_t i = 0; i < ntraces; i++)
		ntrace_rows += traces[i].n;
	/* --gpu names what the sources left unnamed or unknown (a GB200 log
	 * prints "NVIDIA Graphics Device"), in files and imported rows alike;
	 * --system labels the collective rows */
	for (int i = 0; i < nsrc; i++)
		label_rows(cat, &per[i], gpu, system);
	for (size_t i = 0; i < ntraces; i++)
		label_rows(cat, &traces[i], gpu, system);
	if (!npos && !per[0].n && !ntrace_rows) {
		rc = cli_error("fit: nothing to fit: no sources given and '%s' has no collectives with "
			       "sizes, nccl-tests rows or ops recorded with shapes", dbpath);
		goto out;
	}
	/* the sources' row sets, then one per traced run and kind, named
	 * after the run (docs/MODELS.md "Sources", "Memory-bound fits") */
	sets = calloc((size_t)nsrc + ntraces, sizeof *sets);
	if (!sets) {
		rc = cli_fail(CVC_ERR_NOMEM, "fit: out of memory");
		goto out;
	}
	for (int i = 0; i < nsrc; i++)
		sets[nsets++] = (cvc_model_fit_set){&per[i], 6};
	for (size_t i = 0; i < ntraces; i++)
		sets[nsets++] = (cvc_model_fit_set){&traces[i], 4};
	if ((st = cvc_model_fit_sets(db, cat, sets, nsets, stdout, print_warning, NULL, &nfit, err,
				     sizeof err))) {
		rc = cli_fail(st, "%s", err);
		goto out;
	}
	if (!nfit)
		rc = cli_error("fit: no group had enough rows to fit a model");
	else
		cli_say("fit: %d model%s stored in '%s'\n", nfit, nfit == 1 ? "" : "s", dbpath);
out:
	free(sets);
	for (int i = 0; per && i < nsrc; i++)
		cvc_model_rows_release(&per[i]);
	free(per);
	for (size_t i = 0; i < ntraces; i++)
		cvc_model_rows_release(&traces[i]);
	free(traces);
	cvc_db_close(db);
	cvc_hw_catalog_free(cat);
	return rc;
}
