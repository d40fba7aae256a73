/*
 * fitrows.c - from a row set to stored fits: the rows are grouped by what a
 * model describes (GPU and dtype for GEMMs, GPU and class for memory-bound
 * ops, system, collective, group size and node size for collectives), each
 * group goes to its fitter (fit.c) and the fit to the store (fitstore.c).
 * `cvc fit` and `cvc calibrate` both fit through here, and print the same
 * table of what was stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"

/* Canonical names of a row's GPU and system, resolved through the catalog. */
struct key {
	cvc_model_kind kind;
	char gpu[CVC_HW_NAME_MAX];
	char system[CVC_HW_NAME_MAX];
	int sub; /* dtype, class or collective */
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
		int dom = cvc_hw_domain(node);

		snprintf(k->system, sizeof k->system, "%s", s ? s->name : r->system);
		k->sub = (int)r->coll;
		k->nranks = r->nranks;
		/* ranks per NVLink domain: as the log shows them, else the
		 * catalog's; a domain wider than a host (NVL72: trays of 4)
		 * holds the whole group when it fits */
		k->gpn = r->gpus_per_node;
		if (k->gpn <= 0 || (dom > k->gpn && r->nranks <= dom))
			k->gpn = dom > 0 ? dom : k->gpn;
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

/* The name of what a model of kind describes: its dtype, class or collective. */
static const char *op_name(cvc_model_kind kind, int sub)
{
	return kind == CVC_MODEL_GEMM       ? cvc_hw_dtype_name((cvc_hw_dtype)sub)
	       : kind == CVC_MODEL_MEMBOUND ? cvc_model_mem_name((cvc_model_mem)sub)
					    : cvc_model_coll_name((cvc_model_coll)sub);
}

/* Marks the rows whose GPU the catalog does not resolve as done, and says
 * so once per GPU. */
static void skip_unknown(const cvc_hw_catalog *cat, const cvc_model_rows *rows, struct key *keys,
			 char *done, cvc_model_fit_cb cb, void *arg)
{
	char msg[512];

	for (size_t i = 0; i < rows->n; i++) {
		if (done[i] || !key_of(cat, &rows->v[i], &keys[i]))
			continue;
		if (!rows->v[i].gpu[0])
			snprintf(msg, sizeof msg,
				 "fit: '%s' names no GPU: its rows are skipped (name it with --gpu)",
				 rows->source);
		else
			snprintf(msg, sizeof msg,
				 "fit: GPU '%s' is not in the hardware catalog: its rows are skipped "
				 "(name it with --gpu or add it with --catalog)",
				 rows->v[i].gpu);
		if (cb)
			cb(arg, NULL, msg);
		for (size_t j = i; j < rows->n; j++)
			if (strcmp(rows->v[j].gpu, rows->v[i].gpu) == 0)
				done[j] = 1;
	}
}

/* Fits the group key (the rows in grp[0..n)) with the fitter of its kind. */
static cvc_status fit_group(const cvc_hw_catalog *cat, const struct key *key,
			    const cvc_model_row *grp, size_t n, size_t gemm_min, cvc_model_fit *fit,
			    char *err, size_t errlen)
{
	const cvc_hw_spec *spec;

	spec = cvc_hw_catalog_lookup(cat, key->system[0] ? key->system : key->gpu);
	if (!spec)
		spec = cvc_hw_catalog_lookup(cat, key->gpu);
	if (key->kind == CVC_MODEL_GEMM)
		return cvc_model_fit_gemm_min(grp, n, gemm_min, spec, fit, err, errlen);
	if (key->kind == CVC_MODEL_MEMBOUND)
		return cvc_model_fit_membound(grp, n, spec, fit, err, errlen);
	return cvc_model_fit_collective(grp, n, spec, fit, err, errlen);
}

cvc_status cvc_model_fit_rows(cvc_db *db, const cvc_hw_catalog *cat, const cvc_model_rows *rows,
			      size_t gemm_min, cvc_model_fit_cb cb, void *arg, int *nfit,
			      char *err, size_t errlen)
{
	cvc_model_row *grp = NULL;
	struct key *keys = NULL;
	char *done = NULL, why[1024];
	cvc_status st = CVC_OK;

	if (!db || !cat || !rows || !nfit || !err || !errlen)
		return CVC_ERR_USAGE;
	err[0] = '\0';
	if (!rows->n)
		return CVC_OK;
	keys = calloc(rows->n, sizeof *keys);
	done = calloc(rows->n, 1);
	grp = malloc(rows->n * sizeof *grp);
	if (!keys || !done || !grp) {
		snprintf(err, errlen, "fit: out of memory");
		st = CVC_ERR_NOMEM;
		goto out;
	}
	skip_unknown(cat, rows, keys, done, cb, arg);
	for (size_t i = 0; i < rows->n; i++) {
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
		st = fit_group(cat, &keys[i], grp, n, gemm_min, &fit, why, sizeof why);
		if (st == CVC_ERR_USAGE) {
			/* too few rows, or rows no model form fits: the others go on */
			char msg[sizeof why + 2 * CVC_HW_NAME_MAX + 32];

			snprintf(msg, sizeof msg, "%s (%s %s): skipped", why, keys[i].gpu,
				 op_name(keys[i].kind, keys[i].sub));
			if (cb)
				cb(arg, NULL, msg);
			st = CVC_OK;
			continue;
		}
		if (st) {
			snprintf(err, errlen, "%s", why);
			goto out;
		}
		snprintf(fit.gpu, sizeof fit.gpu, "%s", keys[i].gpu);
		snprintf(fit.system, sizeof fit.system, "%s", keys[i].system);
		snprintf(fit.source, sizeof fit.source, "%s", rows->source);
		/* fitting the same input again replaces its fits, never adds copies */
		if ((st = cvc_model_fit_replace(db, &fit, &fit.replaced)) ||
		    (st = cvc_model_fit_store(db, &fit, grp, n))) {
			snprintf(err, errlen, "%s", cvc_db_errmsg(db));
			goto out;
		}
		if (cb)
			cb(arg, &fit, NULL);
		(*nfit)++;
	}
out:
	free(keys);
	free(done);
	free(grp);
	return st;
}

void cvc_model_fit_table_header(FILE *f)
{
	fprintf(f, "%-6s %-10s %-14s %-20s %-13s %5s %4s %6s %8s %8s %8s  %s\n", "id", "kind",
		"gpu", "system", "op", "ranks", "pn", "rows", "mape%", "extrap%", "r2", "used");
}

/* Whether the quality gate lets fit price anything, and why not. */
static void gate_text(const cvc_model_fit *fit, char *buf, size_t len)
{
	const char *why, *lwhy;
	int ok = cvc_model_fit_usable(fit, &why);

	if (ok)
		snprintf(buf, len, "yes");
	else if (fit->kind == CVC_MODEL_COLLECTIVE && cvc_model_level_usable(fit, &lwhy))
		snprintf(buf, len, "level only: %s", why);
	else
		snprintf(buf, len, "no: %s", why);
}

void cvc_model_fit_table_row(FILE *f, const cvc_model_fit *fit)
{
	int sub = fit->kind == CVC_MODEL_GEMM       ? (int)fit->dtype
		  : fit->kind == CVC_MODEL_MEMBOUND ? (int)fit->mem
						    : (int)fit->coll;

	char gate[160], rep[64] = "";

	gate_text(fit, gate, sizeof gate);
	if (fit->replaced == fit->id)
		snprintf(rep, sizeof rep, " (replaces this input's earlier fit)");
	else if (fit->replaced)
		snprintf(rep, sizeof rep, " (replaces model %lld)", (long long)fit->replaced);
	fprintf(f, "%-6lld %-10s %-14s %-20s %-13s %5d %4d %6d %8.2f %8.2f %8.4f  %s%s\n",
		(long long)fit->id, cvc_model_kind_name(fit->kind), fit->gpu,
		fit->system[0] ? fit->system : "-", op_name(fit->kind, sub), fit->nranks,
		fit->gpus_per_node, fit->n_points, fit->mape, fit->extrap_mape, fit->r2, gate, rep);
}

/* Where cvc_model_fit_sets sends what cvc_model_fit_rows reports. */
struct sets_out {
	FILE *table;
	void (*warn)(void *arg, const char *warning);
	void *arg;
};

static void sets_report(void *arg, const cvc_model_fit *fit, const char *warning)
{
	const struct sets_out *o = arg;

	if (fit && o->table)
		cvc_model_fit_table_row(o->table, fit);
	else if (warning && o->warn)
		o->warn(o->arg, warning);
}

cvc_status cvc_model_fit_sets(cvc_db *db, const cvc_hw_catalog *cat,
			      const cvc_model_fit_set *sets, size_t n, FILE *table,
			      void (*warn)(void *arg, const char *warning), void *arg,
			      int *nfit, char *err, size_t errlen)
{
	struct sets_out o = {table, warn, arg};
	cvc_status st;

	if (!db || !cat || (n && !sets) || !nfit || !err || !errlen)
		return CVC_ERR_USAGE;
	if ((st = cvc_db_begin(db))) {
		snprintf(err, errlen, "%s", cvc_db_errmsg(db));
		return st;
	}
	if (table)
		cvc_model_fit_table_header(table);
	for (size_t i = 0; i < n; i++)
		if ((st = cvc_model_fit_rows(db, cat, sets[i].rows, sets[i].gemm_min, sets_report, &o,
					     nfit, err, errlen)))
			goto fail;
	if ((st = cvc_db_commit(db))) {
		snprintf(err, errlen, "%s", cvc_db_errmsg(db));
		goto fail;
	}
	return CVC_OK;
fail:
	cvc_db_rollback(db);
	return st;
}
