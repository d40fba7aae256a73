/*
 * fitstore.c - fitted models in the database: the models and model_points
 * tables (write a fit with its rows, list, get) and the collective rows
 * the database already holds (traces, nccl-tests logs) as fitting input.
 *
 * Kept apart from fitting (fit.c) so the dependency runs one way: the
 * modelset (opmodel.c) reads fits from here, fitting uses the formulas,
 * and neither fitting nor the store needs the modelset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_model.h"
#include "models/opmodel_int.h"

static cvc_status db_err(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "models: %s: %s", what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

const char *cvc_model_fit_op(const cvc_model_fit *fit)
{
	if (fit->kind == CVC_MODEL_COLLECTIVE)
		return cvc_model_coll_name(fit->coll) ? cvc_model_coll_name(fit->coll) : "?";
	if (fit->kind == CVC_MODEL_MEMBOUND)
		return cvc_model_mem_name(fit->mem) ? cvc_model_mem_name(fit->mem) : "?";
	return cvc_hw_dtype_name(fit->dtype) ? cvc_hw_dtype_name(fit->dtype) : "?";
}

cvc_status cvc_model_fit_replace(cvc_db *db, const cvc_model_fit *fit, int64_t *replaced)
{
	static const char *const where =
		"kind = ?1 AND gpu = ?2 AND op = ?3 AND system = ?4 AND nranks = ?5 AND "
		"gpus_per_node = ?6 AND source = ?7";
	sqlite3_stmt *st[2] = {NULL, NULL};
	char sql[2][320];
	cvc_status rc = CVC_OK;

	if (replaced)
		*replaced = 0;
	if (!db || !fit)
		return CVC_ERR_USAGE;
	snprintf(sql[0], sizeof sql[0], "SELECT max(id) FROM models WHERE %s", where);
	snprintf(sql[1], sizeof sql[1], "DELETE FROM models WHERE %s", where);
	for (int i = 0; i < 2 && !rc; i++) {
		if (sqlite3_prepare_v2(cvc_db_sqlite(db), sql[i], -1, &st[i], NULL) != SQLITE_OK) {
			rc = db_err(db, "prepare replace");
			break;
		}
		sqlite3_bind_text(st[i], 1, cvc_model_kind_name(fit->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(st[i], 2, fit->gpu, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st[i], 3, cvc_model_fit_op(fit), -1, SQLITE_STATIC);
		sqlite3_bind_text(st[i], 4, fit->system, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(st[i], 5, fit->nranks);
		sqlite3_bind_int(st[i], 6, fit->gpus_per_node);
		sqlite3_bind_text(st[i], 7, fit->source, -1, SQLITE_TRANSIENT);
		switch (sqlite3_step(st[i])) {
		case SQLITE_ROW:
			if (replaced)
				*replaced = sqlite3_column_int64(st[i], 0);
			break;
		case SQLITE_DONE:
			break;
		default:
			rc = db_err(db, "replace model");
		}
	}
	/* model_points go with their model: ON DELETE CASCADE */
	sqlite3_finalize(st[0]);
	sqlite3_finalize(st[1]);
	return rc;
}

cvc_status cvc_model_fit_store(cvc_db *db, cvc_model_fit *fit, const cvc_model_row *rows,
			       size_t n)
{
	sqlite3 *sq;
	sqlite3_stmt *st = NULL;
	char params[1024], domain[128];
	size_t used;
	cvc_status rc = CVC_OK;

	if (!db || !fit || fit->nparams < 0 || fit->nparams > CVC_MODEL_MAXPARAM)
		return CVC_ERR_USAGE;
	sq = cvc_db_sqlite(db);
	used = (size_t)snprintf(params, sizeof params, "{\"form\":\"%s\",\"p\":[",
				fit->kind == CVC_MODEL_GEMM ? "wave4"
				: fit->kind == CVC_MODEL_MEMBOUND ? "membound" : "regimes");
	for (int i = 0; i < fit->nparams && used < sizeof params; i++)
		used += (size_t)snprintf(params + used, sizeof params - used, "%s%.17g", i ? "," : "",
					 fit->params[i]);
	if (used + 3 >= sizeof params)
		return CVC_ERR_INTERNAL;
	used += (size_t)snprintf(params + used, sizeof params - used, "]");
	if (fit->kind == CVC_MODEL_COLLECTIVE && fit->lvl.valid && used < sizeof params) {
		const cvc_model_coll_level *l = &fit->lvl;

		used += (size_t)snprintf(params + used, sizeof params - used,
					 ",\"level\":{\"fill_bytes\":%.17g,\"algbw_gbps\":%.17g,"
					 "\"min_bytes\":%.17g,\"mape\":%.17g,\"extrap_mape\":%.17g,"
					 "\"b_node_gbps\":%.17g,\"algo\":\"%s\"}",
					 l->fill_bytes, l->algbw_gbps, l->min_bytes,
					 isfinite(l->mape) ? l->mape : -1.0,
					 isfinite(l->extrap_mape) ? l->extrap_mape : -1.0, l->b_node_gbps,
					 l->algo);
	}
	if (used + 2 >= sizeof params)
		return CVC_ERR_INTERNAL;
	snprintf(params + used, sizeof params - used, "}");
	snprintf(domain, sizeof domain, "{\"min\":%.17g,\"max\":%.17g,\"unit\":\"%s\"}", fit->dom_min,
		 fit->dom_max, fit->kind == CVC_MODEL_GEMM ? "flop" : "bytes");
	if (sqlite3_prepare_v2(sq,
			       "INSERT INTO models(kind,gpu,op,system,nranks,gpus_per_node,params_json,"
			       "domain_json,source,n_points,r2,mape,extrap_mape) "
			       "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, "prepare insert");
		goto out;
	}
	sqlite3_bind_text(st, 1, cvc_model_kind_name(fit->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, fit->gpu, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, cvc_model_fit_op(fit), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, fit->system, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 5, fit->nranks);
	sqlite3_bind_int(st, 6, fit->gpus_per_node);
	sqlite3_bind_text(st, 7, params, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 8, domain, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 9, fit->source, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 10, fit->n_points);
#define BIND_REAL(i, v) (isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i))
	BIND_REAL(11, fit->r2);
	BIND_REAL(12, fit->mape);
	BIND_REAL(13, fit->extrap_mape);
#undef BIND_REAL
	if (sqlite3_step(st) != SQLITE_DONE) {
		rc = db_err(db, "insert model");
		goto out;
	}
	fit->id = sqlite3_last_insert_rowid(sq);
	sqlite3_finalize(st);
	st = NULL;
	if (!rows || !n)
		goto out;
	if (sqlite3_prepare_v2(sq,
			       "INSERT INTO model_points(model_id,b,m,n,k,bytes,nranks,time_us,tag) "
			       "VALUES(?,?,?,?,?,?,?,?,?)",
			       -1, &st, NULL) != SQLITE_OK) {
		rc = db_err(db, "prepare points");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, fit->id);
		sqlite3_bind_int64(st, 2, rows[i].b);
		sqlite3_bind_int64(st, 3, rows[i].m);
		sqlite3_bind_int64(st, 4, rows[i].n);
		sqlite3_bind_int64(st, 5, rows[i].k);
		sqlite3_bind_int64(st, 6, rows[i].bytes);
		sqlite3_bind_int(st, 7, rows[i].nranks);
		sqlite3_bind_double(st, 8, rows[i].time_us);
		sqlite3_bind_text(st, 9, rows[i].tag, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE) {
			rc = db_err(db, "insert point");
			goto out;
		}
	}
out:
	sqlite3_finalize(st);
	return rc;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? (const char *)t : "";
}

static double col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static double jnum(json_object *o, const char *k)
{
	json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : NAN;
}

/* The large-message level of a collective fit; left invalid when its
 * figures are not positive (a hand-edited row). */
static void level_from_json(json_object *o, cvc_model_coll_level *l)
{
	json_object *v;

	memset(l, 0, sizeof *l);
	l->fill_bytes = jnum(o, "fill_bytes");
	l->algbw_gbps = jnum(o, "algbw_gbps");
	l->min_bytes = jnum(o, "min_bytes");
	l->mape = jnum(o, "mape");
	l->extrap_mape = jnum(o, "extrap_mape");
	l->b_node_gbps = jnum(o, "b_node_gbps");
	if (!(l->mape >= 0))
		l->mape = NAN;
	if (!(l->extrap_mape >= 0))
		l->extrap_mape = NAN;
	if (json_object_object_get_ex(o, "algo", &v) && json_object_is_type(v, json_type_string))
		snprintf(l->algo, sizeof l->algo, "%s", json_object_get_string(v));
	l->valid = l->algbw_gbps > 0 && isfinite(l->algbw_gbps) && l->fill_bytes >= 0 &&
		   isfinite(l->fill_bytes) && l->min_bytes > 0 && !(l->b_node_gbps < 0);
	if (!(l->b_node_gbps >= 0))
		l->b_node_gbps = 0;
}

/* Row of the models table -> fit; CVC_ERR_FORMAT for a row cvc did not write. */
static cvc_status row_to_fit(sqlite3_stmt *st, cvc_model_fit *fit)
{
	const char *kind = col_text(st, 1), *op = col_text(st, 3);
	json_object *root = NULL, *p = NULL, *dom = NULL, *v = NULL;
	cvc_status rc = CVC_OK;

	memset(fit, 0, sizeof *fit);
	fit->id = sqlite3_column_int64(st, 0);
	if (strcmp(kind, "gemm") == 0) {
		fit->kind = CVC_MODEL_GEMM;
		if (cvc_hw_dtype_parse(op, &fit->dtype))
			return CVC_ERR_FORMAT;
	} else if (strcmp(kind, "collective") == 0) {
		fit->kind = CVC_MODEL_COLLECTIVE;
		if (cvc_model_coll_parse(op, &fit->coll))
			return CVC_ERR_FORMAT;
	} else if (strcmp(kind, "membound") == 0) {
		fit->kind = CVC_MODEL_MEMBOUND;
		if (cvc_model_mem_parse(op, &fit->mem))
			return CVC_ERR_FORMAT;
	} else {
		return CVC_ERR_FORMAT;
	}
	snprintf(fit->gpu, sizeof fit->gpu, "%s", col_text(st, 2));
	snprintf(fit->system, sizeof fit->system, "%s", col_text(st, 4));
	fit->nranks = sqlite3_column_int(st, 5);
	fit->gpus_per_node = sqlite3_column_int(st, 6);
	snprintf(fit->source, sizeof fit->source, "%s", col_text(st, 9));
	fit->n_points = sqlite3_column_int(st, 10);
	fit->r2 = col_real(st, 11);
	fit->mape = col_real(st, 12);
	fit->extrap_mape = col_real(st, 13);
	root = json_tokener_parse(col_text(st, 7));
	if (!root || !json_object_object_get_ex(root, "p", &p) ||
	    !json_object_is_type(p, json_type_array) ||
	    json_object_array_length(p) > CVC_MODEL_MAXPARAM) {
		rc = CVC_ERR_FORMAT;
		goto out;
	}
	fit->nparams = (int)json_object_array_length(p);
	for (int i = 0; i < fit->nparams; i++)
		fit->params[i] = json_object_get_double(json_object_array_get_idx(p, (size_t)i));
	if (fit->kind == CVC_MODEL_GEMM && fit->nparams != GP_N)
		rc = CVC_ERR_FORMAT;
	if (fit->kind == CVC_MODEL_MEMBOUND &&
	    (fit->nparams != MP_N || !(fit->params[MP_EFF] > 0) || !(fit->params[MP_FLOOR] >= 0)))
		rc = CVC_ERR_FORMAT;
	if (fit->kind == CVC_MODEL_COLLECTIVE &&
	    (fit->nparams < 1 + CP_PER || fit->params[0] < 1 || fit->params[0] > CP_MAXREG ||
	     fit->nparams != 1 + CP_PER * (int)fit->params[0]))
		rc = CVC_ERR_FORMAT;
	if (fit->kind == CVC_MODEL_COLLECTIVE && json_object_object_get_ex(root, "level", &v) &&
	    json_object_is_type(v, json_type_object))
		level_from_json(v, &fit->lvl);
	dom = json_tokener_parse(col_text(st, 8));
	if (dom && json_object_object_get_ex(dom, "min", &v))
		fit->dom_min = json_object_get_double(v);
	if (dom && json_object_object_get_ex(dom, "max", &v))
		fit->dom_max = json_object_get_double(v);
out:
	json_object_put(root);
	json_object_put(dom);
	return rc;
}

#define FIT_COLS "id,kind,gpu,op,system,nranks,gpus_per_node,params_json,domain_json,source," \
		 "n_points,r2,mape,extrap_mape"

cvc_status cvc_model_fit_list(cvc_db *db, cvc_model_fit **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	cvc_model_fit *v = NULL;
	size_t cnt = 0, cap = 0;
	cvc_status rc = CVC_OK;
	int s;

	if (!db || !out || !n)
		return CVC_ERR_USAGE;
	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT " FIT_COLS " FROM models ORDER BY id DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "list");
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (cnt == cap && (rc = cvc_grow(&v, &cap, cap + 1, sizeof *v, 16)) != CVC_OK)
			goto out;
		if (row_to_fit(st, &v[cnt]) == CVC_OK)
			cnt++; /* a row another tool wrote is skipped, not fatal */
	}
	if (s != SQLITE_DONE)
		rc = db_err(db, "list");
out:
	sqlite3_finalize(st);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*n = cnt;
	return CVC_OK;
}

cvc_status cvc_model_fit_get(cvc_db *db, int64_t id, cvc_model_fit *out)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc;
	int s;

	if (!db || !out)
		return CVC_ERR_USAGE;
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), "SELECT " FIT_COLS " FROM models WHERE id=?", -1,
			       &st, NULL) != SQLITE_OK)
		return db_err(db, "get");
	sqlite3_bind_int64(st, 1, id);
	s = sqlite3_step(st);
	if (s == SQLITE_ROW)
		rc = row_to_fit(st, out) == CVC_OK
			     ? CVC_OK
			     : cvc_db_fail(db, CVC_ERR_FORMAT, "models: row %lld is malformed", (long long)id);
	else if (s == SQLITE_DONE)
		rc = cvc_db_fail(db, CVC_ERR_NOTFOUND, "models: no model %lld", (long long)id);
	else
		rc = db_err(db, "get");
	sqlite3_finalize(st);
	return rc;
}

cvc_status cvc_model_rows_from_db(cvc_model_rows *rows, cvc_db *db)
{
	static const char *const q_coll =
		"SELECT c.coll, c.bytes, c.group_size, a.end_ns - a.start_ns, coalesce(r.gpu_model,'') "
		"FROM collectives c JOIN activities a ON a.id = c.activity_id "
		"JOIN runs r ON r.id = a.run_id "
		"WHERE c.bytes > 0 AND c.group_size > 1 AND a.end_ns > a.start_ns";
	static const char *const q_nt =
		"SELECT t.op, t.size_bytes, coalesce(t.nranks,0), t.time_us, coalesce(r.gpu_model,''), "
		"coalesce(t.gpus_per_node,0), coalesce(t.algo,'') "
		"FROM nccl_tests t JOIN runs r ON r.id = t.run_id "
		"WHERE t.in_place = 0 AND t.size_bytes > 0 AND t.time_us > 0 AND t.nranks > 1";
	sqlite3_stmt *st = NULL;
	cvc_status rc = CVC_OK;
	int s;

	if (!rows || !db)
		return CVC_ERR_USAGE;
	for (int pass = 0; pass < 2; pass++) {
		if (sqlite3_prepare_v2(cvc_db_sqlite(db), pass ? q_nt : q_coll, -1, &st, NULL) !=
		    SQLITE_OK)
			return db_err(db, "read rows");
		while ((s = sqlite3_step(st)) == SQLITE_ROW) {
			cvc_model_row r;

			memset(&r, 0, sizeof r);
			r.kind = CVC_MODEL_COLLECTIVE;
			r.b = 1;
			if (cvc_model_coll_parse(col_text(st, 0), &r.coll))
				continue; /* a collective the models do not cover */
			r.bytes = sqlite3_column_int64(st, 1);
			r.nranks = sqlite3_column_int(st, 2);
			r.time_us = pass ? sqlite3_column_double(st, 3)
					 : (double)sqlite3_column_int64(st, 3) / 1000.0;
			snprintf(r.gpu, sizeof r.gpu, "%s", col_text(st, 4));
			if (pass) {
				r.gpus_per_node = sqlite3_column_int(st, 5);
				snprintf(r.tag, sizeof r.tag, "%.*s", (int)sizeof r.tag - 1,
					 col_text(st, 6));
			}
			if (r.nranks < 2)
				r.nranks = 2;
			if (rows->n >= 10000000u) {
				rc = CVC_ERR_NOMEM;
				goto out;
			}
			if (rows->n == rows->cap &&
			    (rc = cvc_grow(&rows->v, &rows->cap, rows->cap + 1, sizeof *rows->v, 256)))
				goto out;
			rows->v[rows->n++] = r;
		}
		if (s != SQLITE_DONE) {
			rc = db_err(db, "read rows");
			goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}
	{
		size_t used = strlen(rows->source);

		snprintf(rows->source + used, sizeof rows->source - used, "%sdb:%s",
			 used ? "," : "", cvc_db_path(db));
	}
out:
	sqlite3_finalize(st);
	return rc;
}
