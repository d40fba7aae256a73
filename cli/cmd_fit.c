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

#include "cli.h"
#include "commands.h"
#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"

static const char synopsis[] =
	"[--db PATH] [--gpu NAME] [--system NAME] [--catalog FILE] [SOURCES...]";

/* Canonical names of a row's GPU and system, resolved through the catalog. */
struct key {
	cvc_model_kind kind;
	char gpu[CVC_HW_NAME_MAX];
	char system[CVC_HW_NAME_MAX];
	int sub; /* dtype or collective */
	int nranks, gpn;
};

static int key_of(const cvc_hw_catalog *cat, const cvc_model_row *r, struct key *k)
{
	const cvc_hw_spec *g = cvc_hw_catalog_lookup(cat, r->gpu);
	const cvc_hw_spec *s = r->system[0] ? cvc_hw_catalog_lookup(cat, r->system) : NULL;

	memset(k, 0, sizeof *k);
	if (!g && s)
		g = s;
	if (!g)
		return -1;
	k->kind = r->kind;
	snprintf(k->gpu, sizeof k->gpu, "%s", g->base[0] ? g->base : g->name);
	if (r->kind == CVC_MODEL_COLLECTIVE) {
		const cvc_hw_spec *node = s ? s : g;

		snprintf(k->system, sizeof k->system, "%s", s ? s->name : r->system);
		k->sub = (int)r->coll;
		k->nranks = r->nranks;
		/* ranks per NVLink domain: as the log shows them, else the
		 * catalog's; a domain wider than a host (NVL72: trays of 4)
		 * holds the whole group when it fits */
		k->gpn = r->gpus_per_node;
		if (k->gpn <= 0 || (node->gpus_per_node > k->gpn && r->nranks <= node->gpus_per_node))
			k->gpn = node->gpus_per_node > 0 ? node->gpus_per_node : k->gpn;
		if (k->gpn > r->nranks && r->nranks > 0)
			k->gpn = r->nranks;
	} else if (r->kind == CVC_MODEL_MEMBOUND) {
		k->sub = (int)r->mem;
	} else {
		k->sub = (int)r->dtype;
	}
	return 0;
}

static int key_eq(const struct key *a, const struct key *b)
{
	return a->kind == b->kind && a->sub == b->sub && a->nranks == b->nranks &&
	       a->gpn == b->gpn && strcmp(a->gpu, b->gpu) == 0 && strcmp(a->system, b->system) == 0;
}

/* Fits every (kind, GPU, dtype | system, collective, ranks, node size)
 * group of rows and stores the fits; *nfit counts them.  gemm_min: fewest
 * rows a GEMM fit takes (traces give few distinct shapes, each a mean of
 * many calls).  Returns an exit code. */
static int fit_rows(cvc_db *db, const cvc_hw_catalog *cat, cvc_model_rows *rows,
		    size_t gemm_min, int *nfit)
{
	cvc_model_row *grp = NULL;
	struct key *keys = NULL;
	char *done = NULL, err[1024];
	cvc_status st;
	int rc = 0;

	keys = calloc(rows->n, sizeof *keys);
	done = calloc(rows->n, 1);
	grp = malloc(rows->n * sizeof *grp);
	if (!keys || !done || !grp) {
		rc = cli_fail(CVC_ERR_NOMEM, "fit: out of memory");
		goto out;
	}
	for (size_t i = 0; i < rows->n; i++) {
		if (done[i])
			continue;
		if (key_of(cat, &rows->v[i], &keys[i])) {
			if (!rows->v[i].gpu[0])
				fprintf(stderr, "warning: fit: '%s' names no GPU: its rows are skipped "
					"(name it with --gpu)\n", rows->source);
			else
				fprintf(stderr, "warning: fit: GPU '%s' is not in the hardware catalog: its "
					"rows are skipped (name it with --gpu or add it with --catalog)\n",
					rows->v[i].gpu);
			for (size_t j = i; j < rows->n; j++)
				if (strcmp(rows->v[j].gpu, rows->v[i].gpu) == 0)
					done[j] = 1;
		}
	}
	for (size_t i = 0; i < rows->n; i++) {
		const cvc_hw_spec *spec;
		cvc_model_fit fit;
		size_t n = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < rows->n; j++) {
			if (!done[j] && key_eq(&keys[i], &keys[j])) {
				grp[n] = rows->v[j];
				if (grp[n].kind == CVC_MODEL_COLLECTIVE)
					grp[n].gpus_per_node = keys[i].gpn;
				n++;
				done[j] = 1;
			}
		}
		spec = cvc_hw_catalog_lookup(cat, keys[i].system[0] ? keys[i].system : keys[i].gpu);
		if (!spec)
			spec = cvc_hw_catalog_lookup(cat, keys[i].gpu);
		if (keys[i].kind == CVC_MODEL_GEMM)
			st = cvc_model_fit_gemm_min(grp, n, gemm_min, spec, &fit, err, sizeof err);
		else if (keys[i].kind == CVC_MODEL_MEMBOUND)
			st = cvc_model_fit_membound(grp, n, spec, &fit, err, sizeof err);
		else
			st = cvc_model_fit_collective(grp, n, spec, &fit, err, sizeof err);
		if (st == CVC_ERR_USAGE) {
			fprintf(stderr, "warning: %s (%s %s): skipped\n", err, keys[i].gpu,
				keys[i].kind == CVC_MODEL_GEMM
					? cvc_hw_dtype_name((cvc_hw_dtype)keys[i].sub)
				: keys[i].kind == CVC_MODEL_MEMBOUND
					? cvc_model_mem_name((cvc_model_mem)keys[i].sub)
					: cvc_model_coll_name((cvc_model_coll)keys[i].sub));
			continue;
		}
		if (st) {
			rc = cli_fail(st, "%s", err);
			goto out;
		}
		snprintf(fit.gpu, sizeof fit.gpu, "%s", keys[i].gpu);
		snprintf(fit.system, sizeof fit.system, "%s", keys[i].system);
		snprintf(fit.source, sizeof fit.source, "%s", rows->source);
		if ((st = cvc_model_fit_store(db, &fit, grp, n))) {
			rc = cli_fail(st, "%s", cvc_db_errmsg(db));
			goto out;
		}
		printf("%-6lld %-10s %-14s %-20s %-13s %5d %4d %6d %8.2f %8.2f %8.4f\n",
		       (long long)fit.id, cvc_model_kind_name(fit.kind), fit.gpu,
		       fit.system[0] ? fit.system : "-",
		       fit.kind == CVC_MODEL_GEMM       ? cvc_hw_dtype_name(fit.dtype)
		       : fit.kind == CVC_MODEL_MEMBOUND ? cvc_model_mem_name(fit.mem)
							: cvc_model_coll_name(fit.coll),
		       fit.nranks, fit.gpus_per_node, fit.n_points, fit.mape, fit.extrap_mape, fit.r2);
		(*nfit)++;
	}
out:
	free(keys);
	free(done);
	free(grp);
	return rc;
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
	int npos = 0, rc = 0;
	const struct cli_opt opts[] = {
		{"db", 0, CLI_STR, &dbpath, "PATH", "database (default " CVC_DEFAULT_DB ")", NULL},
		{"gpu", 0, CLI_STR, &gpu, "NAME",
		 "GPU of sources (and imported rows) whose GPU is not named or not in the catalog",
		 NULL},
		{"system", 0, CLI_STR, &system, "NAME",
		 "catalog system the collective logs were measured on (its NICs place them on the "
		 "topology)", NULL},
		{"catalog", 0, CLI_STR, &catalog, "FILE", "extra hardware catalog entries (CSV)", NULL},
		{0},
	};
	cvc_hw_catalog *cat = NULL;
	cvc_db *db = NULL;
	cvc_model_rows *per = NULL, *traces = NULL;
	size_t ntraces = 0, ntrace_rows = 0;
	cvc_status st;
	char err[1024];
	int nfit = 0, in_txn = 0, nsrc = 0;

	rc = cli_parse(ctx->cmd, synopsis, opts, argc, argv, &npos, NULL);
	if (rc)
		return rc < 0 ? 0 : rc;
	rc = 0;
	if ((st = cvc_hw_catalog_new(&cat)) || (catalog && (st = cvc_hw_catalog_load(cat, catalog)))) {
		rc = cli_fail(st, "%s", cvc_hw_catalog_errmsg(cat));
		goto out;
	}
	if (gpu && !cvc_hw_catalog_lookup(cat, gpu)) {
		rc = cli_error("fit: --gpu: '%s' is not in the hardware catalog (see docs/MODELS.md)", gpu);
		goto out;
	}
	if (system) {
		const cvc_hw_spec *sys = cvc_hw_catalog_lookup(cat, system);

		if (!sys || strcmp(sys->kind, "system") != 0) {
			rc = cli_error("fit: --system: '%s' is not a system in the hardware catalog (see "
				       "docs/MODELS.md; add one with --catalog FILE)", system);
			goto out;
		}
		if (gpu && strcmp(cvc_hw_catalog_lookup(cat, gpu)->name, sys->base) != 0) {
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
		if ((st = cvc_model_rows_read(&per[i], argv[i + 1], gpu, err, sizeof err))) {
			rc = cli_fail(st, "%s", err);
			goto out;
		}
	}
	st = cvc_db_open(dbpath, CVC_DB_CREATE, &db);
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
	if (!npos && !per[0].n && !ntrace_rows) {
		rc = cli_error("fit: nothing to fit: no sources given and '%s' has no collectives with "
			       "sizes, nccl-tests rows or ops recorded with shapes", dbpath);
		goto out;
	}
	if ((st = cvc_db_begin(db))) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	in_txn = 1;
	printf("%-6s %-10s %-14s %-20s %-13s %5s %4s %6s %8s %8s %8s\n", "id", "kind", "gpu", "system",
	       "op", "ranks", "pn", "rows", "mape%", "extrap%", "r2");
	for (int i = 0; i < nsrc; i++)
		if (per[i].n && (rc = fit_rows(db, cat, &per[i], 6, &nfit)))
			goto out;
	/* one fit set per traced run and kind, named after the run
	 * (docs/MODELS.md "Sources", "Memory-bound fits") */
	for (size_t i = 0; i < ntraces; i++)
		if ((rc = fit_rows(db, cat, &traces[i], 4, &nfit)))
			goto out;
	if ((st = cvc_db_commit(db))) {
		rc = cli_fail(st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	in_txn = 0;
	if (!nfit)
		rc = cli_error("fit: no group had enough rows to fit a model");
	else
		fprintf(stderr, "fit: %d model%s stored in '%s'\n", nfit, nfit == 1 ? "" : "s", dbpath);
out:
	if (in_txn)
		cvc_db_rollback(db);
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
