/*
 * provenance.c - what priced a projection, written with it: the cvc
 * version, the database (or none: spec-sheet defaults), where each GPU's
 * figures came from, every fitted model those point at and every catalog
 * entry used.  A report shows this as it was when the projection ran;
 * deriving it again from whatever database the report is given would
 * name models that priced nothing (docs/SCENARIOS.md "Provenance").
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"

#define PROV_MAX_MODELS 256
#define PROV_MAX_SPECS 128

struct prov {
	cvc_proj_ctx *ctx;
	FILE *f;
	int first;                        /* no element written yet in this array */
	int64_t ids[PROV_MAX_MODELS];     /* fitted models the origins name */
	size_t nids;
	char specs[PROV_MAX_SPECS][CVC_HW_NAME_MAX]; /* catalog names used */
	size_t nspecs;
	int truncated;
};

/*
 * The stored model an origin rests on: models/opmodel.c names a fit of the
 * database as "model <id>" in every origin it writes for one ("fitted
 * model 3 (...)", "model 3 fitted on ...", "large-message level of model
 * 4 ..."); 0 when it names none (defaults, built-in references).
 */
static int64_t origin_model_id(const char *origin)
{
	for (const char *p = strstr(origin, "model "); p; p = strstr(p + 6, "model "))
		if (isdigit((unsigned char)p[6]))
			return strtoll(p + 6, NULL, 10);
	return 0;
}

static void note_id(struct prov *pv, int64_t id)
{
	for (size_t i = 0; i < pv->nids; i++)
		if (pv->ids[i] == id)
			return;
	if (pv->nids == PROV_MAX_MODELS)
		pv->truncated = 1;
	else
		pv->ids[pv->nids++] = id;
}

/* Records the catalog entry name resolves to (and a system's base GPU). */
static void note_spec(struct prov *pv, const char *name)
{
	const cvc_hw_spec *s = name && *name && pv->ctx->cat
				       ? cvc_hw_catalog_lookup(pv->ctx->cat, name) : NULL;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < pv->nspecs && strcmp(pv->specs[i], s->name) != 0; i++)
		;
	if (i < pv->nspecs)
		return;
	if (pv->nspecs == PROV_MAX_SPECS) {
		pv->truncated = 1;
		return;
	}
	snprintf(pv->specs[pv->nspecs++], CVC_HW_NAME_MAX, "%s", s->name);
	if (s->base[0])
		note_spec(pv, s->base);
}

static void sep(struct prov *pv)
{
	fputs(pv->first ? "\n" : ",\n", pv->f);
	pv->first = 0;
}

static void key_str(FILE *f, const char *key, const char *v)
{
	fprintf(f, "\"%s\":", key);
	proj_json_str(f, v);
}

/* ,"key":v, or null when v is not finite (NaN: not measured). */
/* A number exactly: integers whole (a domain of 17179869184 bytes read
 * 17,179,869,180 with 10 digits), others the shortest of 15-17 digits
 * that reads back to the same double, as the report prints its tables. */
static void key_num(FILE *f, const char *key, double v)
{
	char b[40];
	int p = 15;

	if (!isfinite(v)) {
		fprintf(f, ",\"%s\":null", key);
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		fprintf(f, ",\"%s\":%.0f", key, v);
		return;
	}
	do
		snprintf(b, sizeof b, "%.*g", p, v);
	while (strtod(b, NULL) != v && ++p <= 17);
	fprintf(f, ",\"%s\":%s", key, b);
}

/* One element of "origins"; calls < 0: not counted (compute kinds). */
static void origin_row(struct prov *pv, const char *gpu, const char *kind, const char *op,
		       const char *origin, double calls)
{
	int64_t id = origin_model_id(origin);

	sep(pv);
	fputc('{', pv->f);
	key_str(pv->f, "gpu", gpu);
	fputc(',', pv->f);
	key_str(pv->f, "kind", kind);
	fputc(',', pv->f);
	key_str(pv->f, "op", op);
	if (id > 0) {
		fprintf(pv->f, ",\"model_id\":%lld", (long long)id);
		note_id(pv, id);
	} else {
		fputs(",\"model_id\":null", pv->f);
	}
	fputc(',', pv->f);
	key_str(pv->f, "origin", origin);
	key_num(pv->f, "priced", calls >= 0 ? calls : NAN);
	fputc('}', pv->f);
}

/* The origins of one GPU the projections priced: the dtypes its GEMMs
 * and attention ran in, its memory-bound classes, its collectives. */
static cvc_status gpu_origins(struct prov *pv, int s)
{
	const struct proj_used *u = &pv->ctx->used;
	const char *gpu = u->seen[s].gpu;
	const struct proj_pricer *p;
	cvc_proj_scenario sc;

	cvc_proj_scenario_default(&sc);
	sc.gpu = gpu;
	p = proj_ctx_pricer(pv->ctx, &sc);
	if (!p)
		return CVC_ERR_NOMEM;
	if (!p->known)
		return CVC_OK;
	note_spec(pv, gpu);
	for (int d = 0; d < CVC_HW_NDTYPE; d++) {
		if (u->seen[s].gemm & (1u << d))
			origin_row(pv, gpu, "gemm", cvc_hw_dtype_name((cvc_hw_dtype)d),
				   cvc_model_origin(p->ms_scaled, CVC_MODEL_GEMM, d, 0), -1);
		if (u->seen[s].attn & (1u << d))
			origin_row(pv, gpu, "attention", cvc_hw_dtype_name((cvc_hw_dtype)d),
				   cvc_model_origin(p->ms_scaled, CVC_MODEL_ATTENTION, d, 0), -1);
		if (u->seen[s].attn_fa1 & (1u << d)) {
			char o[640];

			snprintf(o, sizeof o, "FlashAttention-1: FlashAttention-2's time x %.2f (the "
				 "FlashAttention-2 paper's end-to-end table, Dao 2023); %s",
				 cvc_model_fa1_slowdown(),
				 cvc_model_origin(p->ms_scaled, CVC_MODEL_ATTENTION, d, 0));
			origin_row(pv, gpu, "attention", cvc_hw_dtype_name((cvc_hw_dtype)d), o, -1);
		}
	}
	for (int c = 0; c < CVC_MODEL_NMEM; c++)
		if (u->seen[s].mem & (1u << c))
			origin_row(pv, gpu, "membound", cvc_model_mem_name((cvc_model_mem)c),
				   cvc_model_origin(p->ms_base, CVC_MODEL_MEMBOUND, c, 0), -1);
	for (int i = 0; i < u->n; i++)
		if (strcmp(u->e[i].gpu, gpu) == 0)
			origin_row(pv, gpu, "collective",
				   cvc_model_coll_name((cvc_model_coll)u->e[i].coll), u->e[i].origin,
				   u->e[i].calls);
	return CVC_OK;
}

static cvc_status write_models(struct prov *pv)
{
	for (size_t i = 0; i < pv->nids; i++) {
		cvc_model_fit fit;
		cvc_status st;

		if (!pv->ctx->db)
			break; /* an origin without a database names no stored fit */
		st = cvc_model_fit_get(pv->ctx->db, pv->ids[i], &fit);
		if (st) {
			snprintf(pv->ctx->errmsg, sizeof pv->ctx->errmsg, "provenance: %s",
				 cvc_db_errmsg(pv->ctx->db));
			return st;
		}
		note_spec(pv, fit.gpu);
		note_spec(pv, fit.system);
		sep(pv);
		fprintf(pv->f, "{\"id\":%lld,", (long long)fit.id);
		key_str(pv->f, "kind", cvc_model_kind_name(fit.kind));
		fputc(',', pv->f);
		key_str(pv->f, "gpu", fit.gpu);
		fputc(',', pv->f);
		key_str(pv->f, "system", fit.system);
		fputc(',', pv->f);
		key_str(pv->f, "op", cvc_model_fit_op(&fit));
		fprintf(pv->f, ",\"nranks\":%d,\"gpus_per_node\":%d,\"n_points\":%d", fit.nranks,
			fit.gpus_per_node, fit.n_points);
		key_num(pv->f, "r2", fit.r2);
		key_num(pv->f, "mape_pct", fit.mape);
		key_num(pv->f, "extrap_mape_pct", fit.extrap_mape);
		key_num(pv->f, "domain_min", fit.dom_min);
		key_num(pv->f, "domain_max", fit.dom_max);
		fputc(',', pv->f);
		key_str(pv->f, "domain_unit", fit.kind == CVC_MODEL_GEMM ? "flop" : "bytes");
		fputc(',', pv->f);
		key_str(pv->f, "source", fit.source);
		fputc('}', pv->f);
	}
	return CVC_OK;
}

static void write_catalog(struct prov *pv)
{
	for (size_t i = 0; i < pv->nspecs; i++) {
		const cvc_hw_spec *s = cvc_hw_catalog_lookup(pv->ctx->cat, pv->specs[i]);

		sep(pv);
		fputc('{', pv->f);
		key_str(pv->f, "name", s->name);
		fputc(',', pv->f);
		key_str(pv->f, "kind", s->kind);
		fputc(',', pv->f);
		key_str(pv->f, "base", s->base);
		fputc(',', pv->f);
		key_str(pv->f, "source", s->source);
		fputc('}', pv->f);
	}
}

/* The header members: version, database, catalog file. */
static void write_head(const cvc_proj_ctx *ctx, FILE *f)
{
	const char *user_cat = getenv("CVC_CATALOG");

	fputs("{", f);
	key_str(f, "cvc_version", CVC_VERSION);
	fputs(",\"database\":", f);
	if (ctx->db) {
		/* absolute: the report may be made from another directory */
		char *abs = realpath(cvc_db_path(ctx->db), NULL);

		proj_json_str(f, abs ? abs : cvc_db_path(ctx->db));
		free(abs);
	} else {
		fputs("null", f);
	}
	fputc(',', f);
	key_str(f, "models_from",
		ctx->db ? (ctx->force ? "the database's fits, including those the quality gate "
					 "keeps out (--force); spec-sheet defaults where it has none"
				      : "the database's fits; spec-sheet defaults where it has none")
			: "none: spec-sheet defaults");
	fputc(',', f);
	{
		char fits[320];

		snprintf(fits, sizeof fits, "memory at most %.1f%% of the nominal HBM: the lowest "
			 "ceiling of the published out-of-memory messages of training runs in "
			 "tests/data/pytorch-oom-at-limit.csv (their median %.1f%%; docs/SCENARIOS.md "
			 "\"What fits\")", 100 * PROJ_HBM_USABLE, 100 * PROJ_HBM_MEDIAN);
		key_str(f, "fits_when", fits);
	}
	fputc(',', f);
	key_str(f, "catalog_file", "models/hw/catalog.csv (shipped)");
	if (user_cat && *user_cat) {
		fputc(',', f);
		key_str(f, "catalog_user_file", user_cat);
	}
}

cvc_status cvc_proj_provenance_write(cvc_proj_ctx *ctx, FILE *f)
{
	struct prov *pv;
	cvc_status st = CVC_OK;

	if (!ctx || !f)
		return CVC_ERR_USAGE;
	/* a few KB of names: on the heap, not the caller's stack */
	pv = calloc(1, sizeof *pv);
	if (!pv)
		return CVC_ERR_NOMEM;
	pv->ctx = ctx;
	pv->f = f;
	write_head(ctx, f);
	fputs(",\"origins\":[", f);
	pv->first = 1;
	for (int s = 0; s < ctx->used.nseen && !st; s++)
		st = gpu_origins(pv, s);
	fputs("],\"models\":[", f);
	pv->first = 1;
	if (!st)
		st = write_models(pv);
	fputs("],\"catalog\":[", f);
	pv->first = 1;
	write_catalog(pv);
	fputc(']', f);
	if (pv->truncated || ctx->used.dropped || ctx->used.seen_dropped) {
		fputc(',', f);
		key_str(f, "incomplete", "more GPUs, collectives or models than the provenance "
					 "keeps: the lists above are the first ones priced");
	}
	fputs("}", f);
	free(pv);
	if (!st && ferror(f))
		st = CVC_ERR_IO;
	return st;
}

cvc_status cvc_proj_provenance_path(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	size_t stem = strlen(path);
	int n;

	/* the extension of the file name, not of a directory ("./out") */
	if (dot && (!slash || dot > slash + 1) &&
	    (strcmp(dot, ".csv") == 0 || strcmp(dot, ".json") == 0))
		stem = (size_t)(dot - path);
	if (stem > (size_t)INT32_MAX)
		return CVC_ERR_USAGE;
	n = snprintf(buf, len, "%.*s.provenance.json", (int)stem, path);
	return n < 0 || (size_t)n >= len ? CVC_ERR_USAGE : CVC_OK;
}
