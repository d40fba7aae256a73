/*
 * trace.c - the trace section's tables, from the analyzer (cvc_analyze.h)
 * and the models table.  Times leave the library here, so they become
 * milliseconds (ranks, classes) and microseconds (collectives) as the
 * column names say.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_analyze.h"
#include "cvc/cvc_model.h"
#include "rep_proj.h"

int rep_tables_take(struct rep_tables *out, cvc_rep_table **t)
{
	if (out->n >= REP_MAX_TABLES)
		return -1;
	out->v[out->n++] = *t;
	*t = NULL;
	return 0;
}

cvc_status rep_tables_keep(struct rep_tables *out, cvc_rep_table *t, cvc_status st, char *err,
			   size_t errlen)
{
	if (!st && t && t->nrows && rep_tables_take(out, &t))
		st = rep_nomem(err, errlen);
	cvc_rep_table_free(t);
	return st;
}

void rep_tables_release(struct rep_tables *t)
{
	for (size_t i = 0; i < t->n; i++)
		cvc_rep_table_free(t->v[i]);
	t->n = 0;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Per-class totals over every rank of one run, accumulated by class name. */
struct cls_acc {
	char run[128];
	char name[32];
	int is_comm;
	int64_t kernels;
	double sum_ns, union_ns;  /* over ranks: doubles, a sum of int64 could wrap */
	int ranks;
};

static int cmp_cls(const void *pa, const void *pb)
{
	const struct cls_acc *a = pa, *b = pb;
	int c = strcmp(a->run, b->run);

	if (c)
		return c;
	/* Most time first: the chart reads top-down. */
	return (a->union_ns < b->union_ns) - (a->union_ns > b->union_ns);
}

/* The idle breakdown of x's device, or NULL (rows in the same order). */
static const cvc_idle_stat *idle_of(const cvc_breakdown *x, const cvc_idle_stat *is, size_t ni,
				    size_t *at)
{
	for (size_t k = 0; k < ni; k++) {
		size_t j = (*at + k) % ni;

		if (is[j].run_id == x->run_id && is[j].rank == x->rank && is[j].device == x->device) {
			*at = j + 1;
			return &is[j];
		}
	}
	return NULL;
}

/* One row per rank (device); -1 on no memory. */
static int fill_ranks(cvc_rep_table *rt, const cvc_breakdown *b, size_t nb,
		      const cvc_idle_stat *is, size_t ni)
{
	size_t at = 0;

	for (size_t i = 0; i < nb; i++) {
		const cvc_breakdown *x = &b[i];
		const cvc_idle_stat *id = idle_of(x, is, ni, &at);
		long r = cvc_rep_table_add_row(rt);

		if (r < 0 || cvc_rep_table_set_str(rt, (size_t)r, 0, x->run))
			return -1;
		cvc_rep_table_set_num(rt, (size_t)r, 1, x->rank);
		cvc_rep_table_set_num(rt, (size_t)r, 2, x->device);
		cvc_rep_table_set_num(rt, (size_t)r, 3, (double)x->kernels);
		cvc_rep_table_set_num(rt, (size_t)r, 4, (double)x->comm_kernels);
		cvc_rep_table_set_num(rt, (size_t)r, 5, ms(x->span_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 6, ms(x->busy_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 7, ms(x->compute_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 8, ms(x->comm_ns));
		/* compute-only + hidden + exposed + copies + idle = span: the
		 * stacked bar; copies are what of busy no kernel covers, busy
		 * less compute less exposed (each difference within int64, as
		 * a sum of two spans near 2^62 is not) */
		cvc_rep_table_set_num(rt, (size_t)r, 9, ms(x->compute_ns - x->hidden_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 10, ms(x->hidden_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 11, ms(x->exposed_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 12,
				      ms((x->busy_ns - x->compute_ns) - x->exposed_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 13, ms(x->idle_ns));
		cvc_rep_table_set_num(rt, (size_t)r, 14, x->overlap_pct);
		/* the shares of the span, as analyze and the projector define them */
		cvc_rep_table_set_num(rt, (size_t)r, 15, x->shares.comm_share);
		cvc_rep_table_set_num(rt, (size_t)r, 16, x->shares.exposed_share);
		/* idle by cause (cvc_analyze_idle): they add up to idle_ms */
		if (id) {
			cvc_rep_table_set_num(rt, (size_t)r, 17, ms(id->host_wait_ns));
			cvc_rep_table_set_num(rt, (size_t)r, 18, ms(id->kernel_wait_ns));
			cvc_rep_table_set_num(rt, (size_t)r, 19, ms(id->other_ns));
			cvc_rep_table_set_num(rt, (size_t)r, 20, (double)id->unlaunched_gaps);
		}
	}
	return 0;
}

/*
 * Adds every rank's classes to the per-(run, class) totals in *acc (grown
 * as needed, owned by the caller); -1 on no memory.
 */
static int sum_classes(const cvc_breakdown *b, size_t nb, struct cls_acc **acc, size_t *nacc)
{
	size_t cap = 0;

	for (size_t i = 0; i < nb; i++) {
		for (size_t k = 0; k < b[i].nclasses; k++) {
			const cvc_class_time *c = &b[i].classes[k];
			struct cls_acc *a = *acc;
			size_t j;

			for (j = 0; j < *nacc; j++)
				if (strcmp(a[j].run, b[i].run) == 0 && strcmp(a[j].name, c->name) == 0)
					break;
			if (j == *nacc) {
				if (*nacc == cap) {
					if (cvc_grow(&a, &cap, cap + 1, sizeof *a, 32) != CVC_OK)
						return -1;
					*acc = a;
				}
				memset(&a[j], 0, sizeof a[j]);
				snprintf(a[j].run, sizeof a[j].run, "%s", b[i].run);
				snprintf(a[j].name, sizeof a[j].name, "%s", c->name);
				a[j].is_comm = c->is_comm;
				(*nacc)++;
			}
			a[j].kernels += c->kernels;
			a[j].sum_ns += (double)c->sum_ns;
			a[j].union_ns += (double)c->union_ns;
			a[j].ranks++;
		}
	}
	return 0;
}

/* One row per (run, class), most time first; -1 on no memory. */
static int fill_classes(cvc_rep_table *ct, const cvc_breakdown *b, size_t nb)
{
	struct cls_acc *acc = NULL;
	size_t nacc = 0;
	int rc = sum_classes(b, nb, &acc, &nacc);

	/* qsort's pointer must not be NULL, even for 0 items (fuzz_analyze) */
	if (!rc && nacc)
		qsort(acc, nacc, sizeof *acc, cmp_cls);
	for (size_t j = 0; !rc && j < nacc; j++) {
		long r = cvc_rep_table_add_row(ct);
		int nranks = 0;

		/* Mean over the run's devices, counting those without the class as 0. */
		for (size_t i = 0; i < nb; i++)
			nranks += strcmp(b[i].run, acc[j].run) == 0;
		if (r < 0 || cvc_rep_table_set_str(ct, (size_t)r, 0, acc[j].run) ||
		    cvc_rep_table_set_str(ct, (size_t)r, 1, acc[j].name)) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(ct, (size_t)r, 2, acc[j].is_comm);
		cvc_rep_table_set_num(ct, (size_t)r, 3, (double)acc[j].kernels);
		cvc_rep_table_set_num(ct, (size_t)r, 4, acc[j].union_ns / 1e6);
		cvc_rep_table_set_num(ct, (size_t)r, 5, nranks ? acc[j].union_ns / 1e6 / nranks : NAN);
		cvc_rep_table_set_num(ct, (size_t)r, 6, acc[j].sum_ns / 1e6);
	}
	free(acc);
	return rc;
}

/*
 * Skew of one run, rows b[i..j): a row per rank in skt against the run's
 * means, and the run's summary row in sst; -1 on no memory.
 */
static int skew_run(cvc_rep_table *skt, cvc_rep_table *sst, const cvc_breakdown *b, size_t i,
		    size_t j)
{
	size_t slow = i;
	double busy = 0, exp = 0, lo = INFINITY, hi = -INFINITY;
	int64_t first = b[i].first_ns, last_first = b[i].first_ns;
	long r;

	for (size_t k = i; k < j; k++) {
		busy += ms(b[k].busy_ns);
		exp += ms(b[k].exposed_ns);
		lo = ms(b[k].busy_ns) < lo ? ms(b[k].busy_ns) : lo;
		hi = ms(b[k].busy_ns) > hi ? ms(b[k].busy_ns) : hi;
		slow = b[k].busy_ns > b[slow].busy_ns ? k : slow;
		first = b[k].first_ns < first ? b[k].first_ns : first;
		last_first = b[k].first_ns > last_first ? b[k].first_ns : last_first;
	}
	busy /= (double)(j - i);
	exp /= (double)(j - i);
	for (size_t k = i; k < j; k++) {
		r = cvc_rep_table_add_row(skt);
		if (r < 0 || cvc_rep_table_set_str(skt, (size_t)r, 0, b[k].run))
			return -1;
		cvc_rep_table_set_num(skt, (size_t)r, 1, b[k].rank);
		cvc_rep_table_set_num(skt, (size_t)r, 2, b[k].device);
		cvc_rep_table_set_num(skt, (size_t)r, 3, ms(b[k].first_ns - first));
		cvc_rep_table_set_num(skt, (size_t)r, 4, ms(b[k].busy_ns));
		cvc_rep_table_set_num(skt, (size_t)r, 5, busy > 0 ? 100 * (ms(b[k].busy_ns) - busy) / busy : 0);
		cvc_rep_table_set_num(skt, (size_t)r, 6, ms(b[k].exposed_ns));
		cvc_rep_table_set_num(skt, (size_t)r, 7, exp > 0 ? 100 * (ms(b[k].exposed_ns) - exp) / exp : 0);
		cvc_rep_table_set_num(skt, (size_t)r, 8, ms(b[k].idle_ns));
	}
	r = cvc_rep_table_add_row(sst);
	if (r < 0 || cvc_rep_table_set_str(sst, (size_t)r, 0, b[i].run))
		return -1;
	cvc_rep_table_set_num(sst, (size_t)r, 1, (double)(j - i));
	cvc_rep_table_set_num(sst, (size_t)r, 2, lo);
	cvc_rep_table_set_num(sst, (size_t)r, 3, busy);
	cvc_rep_table_set_num(sst, (size_t)r, 4, hi);
	cvc_rep_table_set_num(sst, (size_t)r, 5, lo > 0 ? hi / lo : NAN);
	cvc_rep_table_set_num(sst, (size_t)r, 6, b[slow].rank);
	cvc_rep_table_set_num(sst, (size_t)r, 7, ms(last_first - first));
	return 0;
}

/* Skew per run: rows of one run are adjacent (ordered by run id). */
static int fill_skew(cvc_rep_table *skt, cvc_rep_table *sst, const cvc_breakdown *b, size_t nb)
{
	for (size_t i = 0, j; i < nb; i = j) {
		for (j = i; j < nb && b[j].run_id == b[i].run_id; j++)
			;
		if (skew_run(skt, sst, b, i, j))
			return -1;
	}
	return 0;
}

static cvc_status ranks_tables(const cvc_breakdown *b, size_t nb, const cvc_idle_stat *is,
			       size_t ni, struct rep_tables *out, char *err, size_t errlen)
{
	static const char *const rcols[] = {
		"run", "rank", "device", "kernels", "comm_kernels", "span_ms", "busy_ms",
		"compute_ms", "comm_ms", "compute_only_ms", "hidden_ms", "exposed_ms", "copy_ms",
		"idle_ms", "overlap_pct", "comm_share", "exposed_share", "host_wait_ms",
		"kernel_wait_ms", "other_idle_ms", "unlaunched_gaps"};
	static const char *const ccols[] = {"run", "class", "is_comm", "kernels", "time_ms",
					    "mean_per_rank_ms", "sum_ms"};
	static const char *const scols[] = {"run", "rank", "device", "start_offset_ms",
					    "busy_ms", "busy_vs_mean_pct", "exposed_ms",
					    "exposed_vs_mean_pct", "idle_ms"};
	static const char *const sscols[] = {"run", "devices", "busy_min_ms", "busy_mean_ms",
					     "busy_max_ms", "busy_max_over_min",
					     "busiest_rank", "start_spread_ms"};
	cvc_rep_table *t[4];
	cvc_status st = CVC_OK;

	t[0] = cvc_rep_table_new("ranks", "Time per rank", 21, rcols);
	t[1] = cvc_rep_table_new("classes", "Time per operator class", 7, ccols);
	t[2] = cvc_rep_table_new("skew", "Rank skew", 9, scols);
	t[3] = cvc_rep_table_new("skew_summary", "Rank skew per run", 8, sscols);
	if (!t[0] || !t[1] || !t[2] || !t[3] || fill_ranks(t[0], b, nb, is, ni) ||
	    fill_classes(t[1], b, nb) || fill_skew(t[2], t[3], b, nb))
		st = rep_nomem(err, errlen);
	for (int k = 0; k < 4 && !st; k++)
		if (rep_tables_take(out, &t[k]))
			st = rep_nomem(err, errlen);
	for (int k = 0; k < 4; k++)
		cvc_rep_table_free(t[k]);
	return st;
}

static cvc_status coll_table(const cvc_coll_stat *c, size_t nc, struct rep_tables *out,
			     char *err, size_t errlen)
{
	static const char *const cols[] = {"run", "rank", "collective", "bytes", "group_size",
					   "count", "mean_us", "algbw_gbps", "busbw_gbps"};
	cvc_rep_table *t = cvc_rep_table_new("collectives", "Collectives: achieved bandwidth", 9, cols);

	if (!t)
		return rep_nomem(err, errlen);
	for (size_t i = 0; i < nc; i++) {
		long r = cvc_rep_table_add_row(t);

		if (r < 0 || cvc_rep_table_set_str(t, (size_t)r, 0, c[i].run) ||
		    cvc_rep_table_set_str(t, (size_t)r, 2, c[i].coll)) {
			cvc_rep_table_free(t);
			return rep_nomem(err, errlen);
		}
		cvc_rep_table_set_num(t, (size_t)r, 1, c[i].rank);
		cvc_rep_table_set_num(t, (size_t)r, 3, (double)c[i].bytes);
		cvc_rep_table_set_num(t, (size_t)r, 4, c[i].group_size ? c[i].group_size : NAN);
		cvc_rep_table_set_num(t, (size_t)r, 5, (double)c[i].count);
		cvc_rep_table_set_num(t, (size_t)r, 6, c[i].mean_ns / 1e3);
		cvc_rep_table_set_num(t, (size_t)r, 7, c[i].algbw_gbps);
		cvc_rep_table_set_num(t, (size_t)r, 8, c[i].busbw_gbps);
	}
	if (rep_tables_take(out, &t)) {
		cvc_rep_table_free(t);
		return cvc_errf(err, errlen, CVC_ERR_NOMEM, "too many tables");
	}
	return CVC_OK;
}

/* "'<db>': <what>: <SQLite's message>" into err. */
static cvc_status sql_err(cvc_db *db, const char *what, char *err, size_t errlen)
{
	return cvc_errf(err, errlen, CVC_ERR_DB, "'%s': %s: %s", cvc_db_path(db), what,
		       sqlite3_errmsg(cvc_db_sqlite(db)));
}

#define REP_TOP_KERNELS 25
#define REP_NAME_MAX 300

/*
 * One row of the top kernels query q: the name cut at REP_NAME_MAX bytes
 * on a UTF-8 boundary, its share of its run's kernel time (qt).  -1 on no
 * memory.
 */
static int top_kernel_row(cvc_rep_table *t, sqlite3_stmt *q, sqlite3_stmt *qt)
{
	const char *runname = (const char *)sqlite3_column_text(q, 0);
	const char *name = (const char *)sqlite3_column_text(q, 1);
	const char *cls = (const char *)sqlite3_column_text(q, 2);
	char cut[REP_NAME_MAX + 4];
	size_t n = name ? strlen(name) : 0;
	double total = sqlite3_column_double(q, 5), all = 0;
	int64_t cnt = sqlite3_column_int64(q, 4);
	long r = cvc_rep_table_add_row(t);

	if (r < 0)
		return -1;
	if (n > REP_NAME_MAX) {
		n = REP_NAME_MAX;
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	snprintf(cut, sizeof cut, "%.*s%s", (int)n, name ? name : "",
		 name && name[n] ? "..." : "");
	sqlite3_reset(qt);
	sqlite3_bind_text(qt, 1, runname ? runname : "", -1, SQLITE_TRANSIENT);
	if (sqlite3_step(qt) == SQLITE_ROW)
		all = sqlite3_column_double(qt, 0);
	if (cvc_rep_table_set_str(t, (size_t)r, 0, runname) || cvc_rep_table_set_str(t, (size_t)r, 1, cut) ||
	    cvc_rep_table_set_str(t, (size_t)r, 2, cls ? cls : "unclassified"))
		return -1;
	if (sqlite3_column_type(q, 3) != SQLITE_NULL)
		cvc_rep_table_set_num(t, (size_t)r, 3, sqlite3_column_int(q, 3));
	cvc_rep_table_set_num(t, (size_t)r, 4, (double)cnt);
	cvc_rep_table_set_num(t, (size_t)r, 5, total / 1e6);
	cvc_rep_table_set_num(t, (size_t)r, 6, cnt ? total / (double)cnt / 1e3 : NAN);
	cvc_rep_table_set_num(t, (size_t)r, 7, all > 0 ? 100 * total / all : NAN);
	return 0;
}

/*
 * The kernels that take the most time, per run: plain SQL, since the
 * analyzer reports classes, not names.  Long C++ template names are cut at
 * REP_NAME_MAX bytes, on a UTF-8 boundary.
 */
static cvc_status top_kernels(cvc_db *db, const char *run, struct rep_tables *out, char *err,
			      size_t errlen)
{
	static const char *const cols[] = {"run", "kernel", "class", "is_comm", "count",
					   "total_ms", "mean_us", "share_pct"};
	static const char sql[] =
		/* sums per name id first, names joined only to the kept rows:
		 * grouping and ranking rows that carry whole names would hold every
		 * distinct name in memory at once (issue 14 item 3) */
		"SELECT run, ks.value, cls, is_comm, n, total FROM ("
		" SELECT g.*, row_number() OVER (PARTITION BY g.rid ORDER BY g.total DESC,"
		"  (SELECT substr(value, 1, 256) FROM strings WHERE id = g.nid), g.nid) AS pos"
		" FROM (SELECT r.name AS run, a.name_id AS nid, oc.name AS cls,"
		"  oc.is_comm AS is_comm, count(*) AS n, total(a.end_ns - a.start_ns) AS total,"
		"  a.run_id AS rid"
		"  FROM activities a JOIN runs r ON r.id = a.run_id"
		"  LEFT JOIN name_class nc ON nc.name_id = a.name_id"
		"  LEFT JOIN op_classes oc ON oc.id = nc.class_id"
		"  WHERE a.kind = 1 AND (?1 IS NULL OR r.name = ?1)"
		"  GROUP BY a.run_id, a.name_id) g)"
		" JOIN strings ks ON ks.id = nid WHERE pos <= ?2 ORDER BY rid, pos";
	static const char sql_total[] =
		/* total(), a double: sum() of many int64 durations fails on overflow */
		"SELECT total(a.end_ns - a.start_ns) FROM activities a JOIN runs r ON r.id = a.run_id"
		" WHERE a.kind = 1 AND r.name = ?1";
	sqlite3 *sq = cvc_db_sqlite(db);
	sqlite3_stmt *q = NULL, *qt = NULL;
	cvc_rep_table *t = NULL;
	cvc_status st = CVC_OK;
	int rc = SQLITE_DONE;

	if (sqlite3_prepare_v2(sq, sql, -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(sq, sql_total, -1, &qt, NULL) != SQLITE_OK) {
		st = sql_err(db, "top kernels", err, errlen);
		goto out;
	}
	if (run)
		sqlite3_bind_text(q, 1, run, -1, SQLITE_STATIC);
	sqlite3_bind_int(q, 2, REP_TOP_KERNELS);
	t = cvc_rep_table_new("top_kernels", "Kernels that take the most time", 8, cols);
	if (!t)
		st = rep_nomem(err, errlen);
	while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW)
		if (top_kernel_row(t, q, qt))
			st = rep_nomem(err, errlen);
	if (!st && rc != SQLITE_DONE)
		st = sql_err(db, "top kernels", err, errlen);
out:
	sqlite3_finalize(q);
	sqlite3_finalize(qt);
	return rep_tables_keep(out, t, st, err, errlen);
}

#define REP_MODEL_CURVES 6
#define REP_CURVE_POINTS 25

/*
 * The fitted collective models that describe the trace's collectives (same
 * collective, same group size or fitted for any), as curves of predicted
 * bus bandwidth over their fitted domain.  At most REP_MODEL_CURVES, newest
 * first (cvc_model_fit_list's order).
 */
/*
 * The group size to draw fit f for, when the trace has its collective
 * (same group size, or f fitted for any): f's own, else the first the
 * trace used; -1 when the trace has none of it.
 */
static int curve_ranks(const cvc_model_fit *f, const char *name, const cvc_coll_stat *c,
		       size_t nc)
{
	int used = 0, n = f->nranks;

	for (size_t k = 0; k < nc && !used; k++)
		used = strcmp(c[k].coll, name) == 0 &&
		       (n == 0 || c[k].group_size == 0 || c[k].group_size == n);
	if (!used)
		return -1;
	if (n == 0)
		for (size_t k = 0; k < nc && n == 0; k++)
			if (strcmp(c[k].coll, name) == 0)
				n = c[k].group_size;
	return n;
}

/* REP_CURVE_POINTS rows of fit f over its domain [lo, hi] for n ranks;
 * -1 on no memory. */
static int curve_rows(cvc_rep_table *t, const cvc_model_fit *f, const char *name, int n)
{
	double lo = f->dom_min, hi = f->dom_max;

	for (int p = 0; p < REP_CURVE_POINTS; p++) {
		double bytes = lo * pow(hi / lo, (double)p / (REP_CURVE_POINTS - 1));
		cvc_model_row row = {0};
		double us, bw;
		long r;

		row.kind = CVC_MODEL_COLLECTIVE;
		row.coll = f->coll;
		row.bytes = (int64_t)llround(bytes);
		row.nranks = n;
		row.gpus_per_node = f->gpus_per_node;
		us = cvc_model_fit_predict(f, NULL, &row);
		bw = us > 0 ? (double)row.bytes / (us * 1e3) * cvc_model_busbw_factor(f->coll, n)
			    : NAN;
		r = cvc_rep_table_add_row(t);
		if (r < 0 || cvc_rep_table_set_str(t, (size_t)r, 1, name) ||
		    cvc_rep_table_set_str(t, (size_t)r, 2, f->gpu))
			return -1;
		cvc_rep_table_set_num(t, (size_t)r, 0, (double)f->id);
		cvc_rep_table_set_num(t, (size_t)r, 3, n);
		cvc_rep_table_set_num(t, (size_t)r, 4, (double)row.bytes);
		cvc_rep_table_set_num(t, (size_t)r, 5, us);
		cvc_rep_table_set_num(t, (size_t)r, 6, bw);
	}
	return 0;
}

static cvc_status coll_model_table(cvc_db *db, const cvc_coll_stat *c, size_t nc,
				   struct rep_tables *out, char *err, size_t errlen)
{
	static const char *const cols[] = {"model_id", "collective", "gpu", "nranks", "bytes",
					   "time_us", "busbw_gbps"};
	cvc_model_fit *fits = NULL;
	size_t nfits = 0, curves = 0;
	cvc_rep_table *t = NULL;
	cvc_status st = CVC_OK;

	/* A database from before the models table has no fits to draw. */
	if (cvc_model_fit_list(db, &fits, &nfits) != CVC_OK || nfits == 0) {
		free(fits);
		return CVC_OK;
	}
	t = cvc_rep_table_new("collective_model", "Fitted collective models", 7, cols);
	if (!t)
		st = rep_nomem(err, errlen);
	for (size_t i = 0; !st && i < nfits && curves < REP_MODEL_CURVES; i++) {
		const cvc_model_fit *f = &fits[i];
		const char *name = cvc_model_coll_name(f->coll);
		int n;

		if (f->kind != CVC_MODEL_COLLECTIVE || !name || !(f->dom_min > 0) ||
		    !(f->dom_max >= f->dom_min) || (n = curve_ranks(f, name, c, nc)) < 0)
			continue;
		if (curve_rows(t, f, name, n))
			st = rep_nomem(err, errlen);
		curves++;
	}
	free(fits);
	return rep_tables_keep(out, t, st, err, errlen);
}

cvc_status rep_trace_tables(cvc_db *db, const char *run, struct rep_tables *out, char *err,
			    size_t errlen)
{
	cvc_analyze_opts ao = {0};
	cvc_breakdown *b = NULL;
	cvc_coll_stat *c = NULL;
	cvc_idle_stat *is = NULL;
	size_t nb = 0, nc = 0, ni = 0;
	cvc_status st;

	ao.run = run;
	ao.by = CVC_BY_RANK;
	ao.classes = 1;
	st = cvc_analyze_run(db, &ao, &b, &nb);
	if (!st)
		st = cvc_analyze_idle(db, &ao, CVC_KERNEL_WAIT_NS_DEFAULT, &is, &ni);
	if (st) {
		cvc_errf(err, errlen, st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	if (nb) {
		st = ranks_tables(b, nb, is, ni, out, err, errlen);
		if (!st)
			st = top_kernels(db, run, out, err, errlen);
		if (st)
			goto out;
	}
	st = cvc_analyze_collectives(db, &ao, &c, &nc);
	if (st) {
		cvc_errf(err, errlen, st, "%s", cvc_db_errmsg(db));
		goto out;
	}
	if (nc)
		st = coll_table(c, nc, out, err, errlen);
	if (nc && !st)
		st = coll_model_table(db, c, nc, out, err, errlen);
out:
	cvc_breakdown_free(b, nb);
	free(c);
	free(is);
	return st;
}

/* ---- the models table ------------------------------------------------------------ */

/* Row q as a new row of t, column for column: numbers, text or empty. */
static int copy_row(cvc_rep_table *t, sqlite3_stmt *q)
{
	long r = cvc_rep_table_add_row(t);

	if (r < 0)
		return -1;
	for (size_t k = 0; k < t->ncols; k++) {
		int ty = sqlite3_column_type(q, (int)k);

		if (ty == SQLITE_INTEGER || ty == SQLITE_FLOAT)
			cvc_rep_table_set_num(t, (size_t)r, k, sqlite3_column_double(q, (int)k));
		else if (ty == SQLITE_TEXT &&
			 cvc_rep_table_set_str(t, (size_t)r, k, (const char *)sqlite3_column_text(q, (int)k)))
			return -1;
	}
	return 0;
}

cvc_status rep_models_table(cvc_db *db, struct rep_tables *out, char *err, size_t errlen)
{
	static const char *const cols[] = {"id", "kind", "gpu", "op", "system", "nranks",
					   "n_points", "r2", "mape_pct", "extrap_mape_pct",
					   "domain", "source", "created_at"};
	static const char sql[] =
		"SELECT id, kind, gpu, op, system, nranks, n_points, r2, mape, extrap_mape,"
		" domain_json, source, created_at FROM models ORDER BY kind, gpu, op, nranks, id DESC";
	sqlite3_stmt *q = NULL;
	cvc_rep_table *t = NULL;
	cvc_status st = CVC_OK;
	int rc = SQLITE_DONE;

	/* A database from before the models table holds no fits: nothing to show. */
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, &q, NULL) != SQLITE_OK) {
		sqlite3_finalize(q);
		return CVC_OK;
	}
	t = cvc_rep_table_new("models", "Fitted models and their quality", 13, cols);
	if (!t)
		st = rep_nomem(err, errlen);
	while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW)
		if (copy_row(t, q))
			st = rep_nomem(err, errlen);
	if (!st && rc != SQLITE_DONE)
		st = sql_err(db, "reading models", err, errlen);
	sqlite3_finalize(q);
	return rep_tables_keep(out, t, st, err, errlen);
}
