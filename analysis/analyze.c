/*
 * analyze.c - compute vs communication breakdown per run, rank (device) and
 * step (see cvc_analyze.h for the definitions).
 *
 * One ordered read per device: SQLite walks activities_by_device and every
 * activity is fed, in start order, into streaming mergers (all kernels,
 * compute, communication, and per class).  Nothing per kernel is kept, so a
 * device with millions of kernels costs the index scan and O(1) memory.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>
#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_analyze.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_vocab.h"
#include "analysis/analyze_int.h"

/* PyTorch's step annotation; under torch.autograd.profiler.emit_nvtx an
 * Nsight Systems range carries the op's sequence number and sizes after
 * it ("ProfilerStep#0, op_id = 17"). */
#define DEFAULT_STEP_REGEX "^ProfilerStep#(\\d+)(?:, .*)?$"
/* Class slots beyond op_classes: kernels whose name has no class. */
#define UNCLS_NAME "unclassified"
#define UNCLS_COMM_NAME "unclassified-comm"
/* A bound on op_classes rows read (the shipped set has 19). */
#define MAX_CLASSES 1024
/* Activity times beyond this are corrupt (and would overflow the sums). */
#define TIME_LIMIT_NS CVC_TIME_LIMIT_NS

/* ---- name_id -> class slot hash --------------------------------------- */

struct name_ent {
	int64_t name_id; /* 0 = empty slot (ids of INTEGER PRIMARY KEY start at 1) */
	int32_t slot;
	int32_t is_comm;
};

struct class_slot {
	char name[32];
	int64_t class_id;
	int is_comm;
};

/* op_classes rows, then the two unclassified slots (see analyze_int.h). */
#define class_map an_class_map

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static struct name_ent *map_find(const struct class_map *m, int64_t id)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = mix64((uint64_t)id) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->ents[i].name_id == id)
			return &m->ents[i];
		if (m->ents[i].name_id == 0)
			return NULL;
	}
}

static cvc_status map_put(struct class_map *m, int64_t id, int32_t slot, int32_t is_comm)
{
	size_t i;

	if (id <= 0)
		return CVC_OK; /* not a strings id: such names stay unclassified */
	if ((m->used + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 1024;
		struct name_ent *ne = calloc(ncap, sizeof *ne);

		if (!ne)
			return CVC_ERR_NOMEM;
		for (size_t k = 0; k < m->cap; k++) {
			if (!m->ents[k].name_id)
				continue;
			for (i = mix64((uint64_t)m->ents[k].name_id) & (ncap - 1); ne[i].name_id;
			     i = (i + 1) & (ncap - 1))
				;
			ne[i] = m->ents[k];
		}
		free(m->ents);
		m->ents = ne;
		m->cap = ncap;
	}
	for (i = mix64((uint64_t)id) & (m->cap - 1); m->ents[i].name_id && m->ents[i].name_id != id;
	     i = (i + 1) & (m->cap - 1))
		;
	if (!m->ents[i].name_id)
		m->used++;
	m->ents[i].name_id = id;
	m->ents[i].slot = slot;
	m->ents[i].is_comm = is_comm;
	return CVC_OK;
}

static void map_release(struct class_map *m)
{
	free(m->ents);
	free(m->slots);
	memset(m, 0, sizeof *m);
}

cvc_status an_db_err(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "'%s': %s: %s", cvc_db_path(db), what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

cvc_status an_prepare(cvc_db *db, const char *sql, struct sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(cvc_db_sqlite(db), sql, -1, st, NULL) != SQLITE_OK) {
		*st = NULL;
		return an_db_err(db, "preparing query");
	}
	return CVC_OK;
}

static void copy_trunc(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= cap)
		n = cap - 1;
	if (n)
		memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Loads op_classes and name_class into m (replacing what it held). */
static cvc_status map_load(cvc_db *db, struct class_map *m)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc = CVC_OK;
	size_t cap = 32;
	int r;

	map_release(m);
	m->slots = calloc(cap, sizeof *m->slots);
	if (!m->slots)
		return CVC_ERR_NOMEM;
	if ((rc = an_prepare(db, "SELECT id, name, is_comm FROM op_classes ORDER BY id", &st)))
		goto out;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (m->nslots + 2 >= cap) {
			struct class_slot *ns;

			if (cap >= MAX_CLASSES) {
				rc = cvc_db_fail(db, CVC_ERR_FORMAT,
						 "'%s': op_classes has more than %d rows",
						 cvc_db_path(db), MAX_CLASSES);
				goto out;
			}
			ns = realloc(m->slots, cap * 2 * sizeof *ns);
			if (!ns) {
				rc = CVC_ERR_NOMEM;
				goto out;
			}
			m->slots = ns;
			cap *= 2;
		}
		m->slots[m->nslots].class_id = sqlite3_column_int64(st, 0);
		copy_trunc(m->slots[m->nslots].name, sizeof m->slots[0].name,
			   (const char *)sqlite3_column_text(st, 1));
		m->slots[m->nslots].is_comm = sqlite3_column_int(st, 2) != 0;
		m->nslots++;
	}
	if (r != SQLITE_DONE) {
		rc = an_db_err(db, "reading op_classes");
		goto out;
	}
	sqlite3_finalize(st);
	st = NULL;
	m->uncls = m->nslots;
	copy_trunc(m->slots[m->nslots].name, sizeof m->slots[0].name, UNCLS_NAME);
	m->slots[m->nslots].class_id = -1;
	m->slots[m->nslots++].is_comm = 0;
	m->uncls_comm = m->nslots;
	copy_trunc(m->slots[m->nslots].name, sizeof m->slots[0].name, UNCLS_COMM_NAME);
	m->slots[m->nslots].class_id = -1;
	m->slots[m->nslots++].is_comm = 1;

	/* Both sides ordered by id, so the slot search below is a merge walk. */
	if ((rc = an_prepare(db, "SELECT name_id, class_id FROM name_class ORDER BY class_id", &st)))
		goto out;
	{
		size_t k = 0;

		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t cid = sqlite3_column_int64(st, 1);

			while (k < m->uncls && m->slots[k].class_id < cid)
				k++;
			/* A class id with no op_classes row: leave the name unlabeled. */
			if (k >= m->uncls || m->slots[k].class_id != cid)
				continue;
			if ((rc = map_put(m, sqlite3_column_int64(st, 0), (int32_t)k,
					  m->slots[k].is_comm)))
				goto out;
		}
	}
	if (r != SQLITE_DONE)
		rc = an_db_err(db, "reading name_class");
out:
	sqlite3_finalize(st);
	return rc;
}

/* Labels a name the classifier never saw, by HTA's rule, and caches it. */
static cvc_status map_fallback(cvc_db *db, struct class_map *m, int64_t name_id,
			       struct name_ent *out)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc;
	int comm = 0, r;

	if ((rc = an_prepare(db, "SELECT value FROM strings WHERE id=?", &st)))
		return rc;
	sqlite3_bind_int64(st, 1, name_id);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		comm = cvc_hta_is_comm((const char *)sqlite3_column_text(st, 0));
	else if (r != SQLITE_DONE)
		rc = an_db_err(db, "reading strings");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	out->name_id = name_id;
	out->is_comm = comm;
	out->slot = (int32_t)(comm ? m->uncls_comm : m->uncls);
	return map_put(m, name_id, out->slot, out->is_comm);
}

/* ---- accumulators ------------------------------------------------------------ */

struct cls_acc {
	int64_t kernels;
	an_u128 sum_ns;      /* of durations: n kernels of up to 2^63 ns each */
	cvc_merger m;
};

struct acc {
	int64_t kernels, comm_kernels;
	int have_span;
	int64_t first_ns, last_ns;
	cvc_merger all;      /* every activity: busy */
	cvc_merger kern;     /* kernels, compute or communication */
	cvc_merger comp, comm;
	struct cls_acc *cls; /* nslots entries when classes are asked for */
	int64_t last_row;    /* activity last counted here (windows of one step) */
};

static cvc_status acc_init(struct acc *a, size_t nslots, int classes)
{
	memset(a, 0, sizeof *a);
	cvc_merger_init(&a->all);
	cvc_merger_init(&a->kern);
	cvc_merger_init(&a->comp);
	cvc_merger_init(&a->comm);
	a->last_row = -1;
	if (classes) {
		a->cls = calloc(nslots, sizeof *a->cls);
		if (!a->cls)
			return CVC_ERR_NOMEM;
		for (size_t i = 0; i < nslots; i++)
			cvc_merger_init(&a->cls[i].m);
	}
	return CVC_OK;
}

/* One activity, already clipped: [s, e), in non-decreasing s. */
static void acc_feed(struct acc *a, int kind, int64_t s, int64_t e, const struct name_ent *ne,
		     int count)
{
	if (!a->have_span || s < a->first_ns)
		a->first_ns = s;
	if (!a->have_span || e > a->last_ns)
		a->last_ns = e;
	a->have_span = 1;
	/* Sorted input is guaranteed by the caller; the status cannot fail here.
	 * A copy or a memset keeps the GPU busy (busy_us: the union of all
	 * activities, as HTA's idle time counts memory kernels busy) but is
	 * neither compute nor communication. */
	(void)cvc_merger_add(&a->all, s, e);
	if (kind != CVC_ACT_KERNEL)
		return;
	(void)cvc_merger_add(&a->kern, s, e);
	(void)cvc_merger_add(ne->is_comm ? &a->comm : &a->comp, s, e);
	if (count) {
		a->kernels++;
		a->comm_kernels += ne->is_comm != 0;
	}
	if (a->cls) {
		struct cls_acc *c = &a->cls[ne->slot];

		c->kernels += count;
		c->sum_ns += (uint64_t)e - (uint64_t)s;
		(void)cvc_merger_add(&c->m, s, e);
	}
}

/* ---- result rows ----------------------------------------------------------------- */

struct rowbuf {
	cvc_breakdown *r;
	size_t n, cap;
};

static cvc_status row_from_acc(cvc_db *db, struct rowbuf *rb, const struct an_run *run,
			       int rank, int device, int64_t step, const struct acc *a,
			       const struct class_map *m)
{
	cvc_breakdown *b;

	if (rb->n == rb->cap) {
		cvc_status grown = cvc_grow(&rb->r, &rb->cap, rb->cap + 1, sizeof *rb->r, 16);

		if (grown != CVC_OK)
			return grown;
	}
	b = &rb->r[rb->n];
	memset(b, 0, sizeof *b);
	copy_trunc(b->run, sizeof b->run, run->name);
	b->run_id = run->id;
	b->rank = rank;
	b->device = device;
	b->step = step;
	b->kernels = a->kernels;
	b->comm_kernels = a->comm_kernels;
	b->busy_ns = cvc_merger_total(&a->all);
	b->compute_ns = cvc_merger_total(&a->comp);
	b->comm_ns = cvc_merger_total(&a->comm);
	/* |comm n comp| = |comm| + |comp| - |comm u comp|, the union the
	 * kernels'; kernels - comm is at most comp, so nothing here can
	 * overflow */
	b->hidden_ns = b->compute_ns - (cvc_merger_total(&a->kern) - b->comm_ns);
	b->exposed_ns = b->comm_ns - b->hidden_ns;
	b->overlap_pct = b->comm_ns ? 100.0 * (double)b->hidden_ns / (double)b->comm_ns : 0.0;
	b->span_ns = a->have_span ? a->last_ns - a->first_ns : 0;
	b->first_ns = a->have_span ? a->first_ns : 0;
	b->idle_ns = b->span_ns - b->busy_ns;
	cvc_shares_of((double)b->span_ns, (double)b->compute_ns, (double)b->comm_ns,
		      (double)b->exposed_ns, &b->shares);
	if (a->cls) {
		size_t k = 0;

		for (size_t i = 0; i < m->nslots; i++) {
			k += a->cls[i].kernels > 0 || a->cls[i].sum_ns > 0;
			if (a->cls[i].sum_ns > (an_u128)INT64_MAX)
				return cvc_db_fail(db, CVC_ERR_FORMAT,
						   "'%s': run '%s' rank %d device %d: the kernels of "
						   "class '%s' last 2^63 ns or more in all (292 years): "
						   "not a trace's times", cvc_db_path(db), run->name,
						   rank, device, m->slots[i].name);
		}
		b->classes = calloc(k ? k : 1, sizeof *b->classes);
		if (!b->classes)
			return CVC_ERR_NOMEM;
		for (size_t i = 0; i < m->nslots; i++) {
			cvc_class_time *c;

			if (!(a->cls[i].kernels > 0 || a->cls[i].sum_ns > 0))
				continue;
			c = &b->classes[b->nclasses++];
			copy_trunc(c->name, sizeof c->name, m->slots[i].name);
			c->is_comm = m->slots[i].is_comm;
			c->kernels = a->cls[i].kernels;
			c->sum_ns = (int64_t)a->cls[i].sum_ns;
			c->union_ns = cvc_merger_total(&a->cls[i].m);
		}
	}
	rb->n++;
	return CVC_OK;
}

/* Adds b's figures to a (windows of one step are disjoint: unions add). */
static void acc_merge(struct acc *a, const struct acc *b, size_t nslots)
{
	if (b->have_span) {
		if (!a->have_span || b->first_ns < a->first_ns)
			a->first_ns = b->first_ns;
		if (!a->have_span || b->last_ns > a->last_ns)
			a->last_ns = b->last_ns;
		a->have_span = 1;
	}
	a->kernels += b->kernels;
	a->comm_kernels += b->comm_kernels;
	a->all.closed_ns += cvc_merger_total(&b->all);
	a->kern.closed_ns += cvc_merger_total(&b->kern);
	a->comp.closed_ns += cvc_merger_total(&b->comp);
	a->comm.closed_ns += cvc_merger_total(&b->comm);
	if (a->cls && b->cls)
		for (size_t i = 0; i < nslots; i++) {
			a->cls[i].kernels += b->cls[i].kernels;
			a->cls[i].sum_ns += b->cls[i].sum_ns;
			a->cls[i].m.closed_ns += cvc_merger_total(&b->cls[i].m);
		}
}

/* ---- the sweep ------------------------------------------------------------------- */

/* The clock offset of (run, rank); 0 when the ranks table has no row. */
static cvc_status rank_clock_offset(cvc_db *db, int64_t run_id, int rank, int64_t *offset)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc;
	int r;

	*offset = 0;
	if ((rc = an_prepare(db, "SELECT clock_offset_ns FROM ranks WHERE run_id=? AND rank=?",
			  &st)))
		return rc;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, rank);
	if ((r = sqlite3_step(st)) == SQLITE_ROW)
		*offset = sqlite3_column_int64(st, 0);
	else if (r != SQLITE_DONE)
		rc = an_db_err(db, "reading ranks");
	sqlite3_finalize(st);
	return rc;
}

/* The class of kernel name nid into *ne; CVC_ERR_NOTFOUND when it has none
 * and the caller may classify and retry. */
static cvc_status kernel_class(cvc_db *db, struct an_ctx *cx, int64_t nid, struct name_ent *ne)
{
	const struct name_ent *found = map_find(&cx->map, nid);

	if (nid <= 0) {
		/* Not a strings id (hand-made db): nothing to classify. */
		ne->slot = (int32_t)cx->map.uncls;
		return CVC_OK;
	}
	if (found) {
		*ne = *found;
		return CVC_OK;
	}
	if (cx->may_classify)
		return CVC_ERR_NOTFOUND;
	return map_fallback(db, &cx->map, nid, ne);
}

/* Feeds activity [s, e] (row row of the device) to the accumulators of the
 * windows it overlaps; step_last counts it once per step. */
static void feed_windows(const struct an_winset *ws, struct acc *accs, int64_t *step_last,
			 int64_t row, int kind, int64_t s, int64_t e, const struct name_ent *ne)
{
	/* Last window starting before e (or at s, for zero-length ones). */
	size_t lo = 0, hi = ws->n;
	int64_t lim = e > s ? e : s + 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ws->w[mid].s < lim)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back while some earlier window can still reach s. */
	for (size_t j = lo; j-- > 0 && ws->w[j].max_e > s;) {
		const struct an_win *w = &ws->w[j];
		int64_t cs = s > w->s ? s : w->s, ce = e < w->e ? e : w->e;
		int in = cs < ce || (s == e && w->s <= s && s < w->e);
		int count;

		if (!in)
			continue;
		if (ce < cs)
			ce = cs;
		count = step_last[w->step_idx] != row;
		step_last[w->step_idx] = row;
		acc_feed(&accs[j], kind, cs, ce, ne, count);
	}
}

/* Folds each step's windows together, then adds one row per step in order. */
static cvc_status step_rows(cvc_db *db, struct an_ctx *cx, const struct an_run *run,
			    int rank, int device, int64_t offset, const struct an_winset *ws,
			    const struct acc *accs, struct rowbuf *rb, cvc_step_rule rule)
{
	struct acc *stepacc = calloc(ws->nsteps, sizeof *stepacc);
	cvc_status rc = CVC_OK;

	if (!stepacc)
		return CVC_ERR_NOMEM;
	for (size_t i = 0; i < ws->nsteps; i++)
		if ((rc = acc_init(&stepacc[i], cx->map.nslots, cx->opts.classes)))
			goto out;
	for (size_t j = 0; j < ws->n; j++)
		acc_merge(&stepacc[ws->w[j].step_idx], &accs[j], cx->map.nslots);
	for (size_t i = 0; i < ws->nsteps && !rc; i++)
		if (!(rc = row_from_acc(db, rb, run, rank, device, ws->steps[i], &stepacc[i],
					&cx->map))) {
			rb->r[rb->n - 1].clock_offset_ns = offset;
			rb->r[rb->n - 1].step_rule = rule;
		}
out:
	for (size_t i = 0; i < ws->nsteps; i++)
		free(stepacc[i].cls);
	free(stepacc);
	return rc;
}

/* One row per step from accumulators indexed like ws->steps. */
static cvc_status launch_rows(cvc_db *db, struct an_ctx *cx, const struct an_run *run,
			      int rank, int device, int64_t offset, const struct an_winset *ws,
			      const struct acc *laccs, struct rowbuf *rb)
{
	cvc_status rc = CVC_OK;

	for (size_t i = 0; i < ws->nsteps && !rc; i++)
		if (!(rc = row_from_acc(db, rb, run, rank, device, ws->steps[i], &laccs[i],
					&cx->map))) {
			rb->r[rb->n - 1].clock_offset_ns = offset;
			rb->r[rb->n - 1].step_rule = CVC_STEP_BY_LAUNCH;
		}
	return rc;
}

/*
 * The step windows of a device: GPU-timeline windows on this device first,
 * then NVTX, then CPU ranges of the rank.  *host: they are host windows,
 * where an activity's launch time (activities.launch_ns) places it.
 */
static cvc_status step_windows(cvc_db *db, struct an_ctx *cx, const struct an_run *run,
			       int rank, int device, struct an_winset *ws, int *host)
{
	cvc_status rc;

	*host = 0;
	if ((rc = an_load_windows(db, cx, run->id, rank, CVC_RANGE_GPU, device, ws)) || ws->n)
		return rc;
	*host = 1;
	if ((rc = an_load_windows(db, cx, run->id, rank, CVC_RANGE_NVTX, -1, ws)) || ws->n)
		return rc;
	return an_load_windows(db, cx, run->id, rank, CVC_RANGE_CPU, -1, ws);
}

/* Per-step accumulators for activities placed by launch time. */
static cvc_status laccs_new(struct an_ctx *cx, size_t n, struct acc **out)
{
	cvc_status rc = CVC_OK;

	*out = calloc(n ? n : 1, sizeof **out);
	if (!*out)
		return CVC_ERR_NOMEM;
	for (size_t i = 0; i < n && !rc; i++)
		rc = acc_init(&(*out)[i], cx->map.nslots, cx->opts.classes);
	return rc;
}

/*
 * Sweeps one device.  Returns CVC_ERR_NOTFOUND (with nothing added) when a
 * kernel name has no class and the caller should classify and retry.
 *
 * Under host windows every activity is fed twice: whole to the step its
 * launch time falls in (laccs), and clipped to the windows it overlaps
 * (accs).  When the device has any launch time, the first is the answer
 * and activities without one belong to no step: their call is not in the
 * trace, which in the shared traces means they were queued before the host
 * trace began (HTA leaves them out of every iteration too).  A device with
 * no launch time at all (older database, a trace without runtime records)
 * keeps the clipped figures.
 */
static cvc_status sweep_device(cvc_db *db, struct an_ctx *cx, const struct an_run *run,
			       int rank, int device, struct rowbuf *rb)
{
	sqlite3_stmt *st = NULL;
	struct an_winset ws = {0};
	struct acc *accs = NULL;  /* one per window, or one for the device */
	struct acc *laccs = NULL; /* one per step, host windows only */
	size_t nacc = 0;
	int64_t *step_last = NULL;
	cvc_status rc = CVC_OK;
	int64_t row = 0, offset = 0, launched = 0;
	int r, host = 0;

	if ((rc = rank_clock_offset(db, run->id, rank, &offset)))
		goto out;
	if (cx->opts.by == CVC_BY_STEP) {
		if ((rc = step_windows(db, cx, run, rank, device, &ws, &host)))
			goto out;
		if (ws.n == 0)
			goto out;
		nacc = ws.n;
		step_last = malloc(ws.nsteps * sizeof *step_last);
		if (!step_last) {
			rc = CVC_ERR_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < ws.nsteps; i++)
			step_last[i] = -1;
		if (host && (rc = laccs_new(cx, ws.nsteps, &laccs)))
			goto out;
	} else {
		nacc = 1;
	}
	accs = calloc(nacc, sizeof *accs);
	if (!accs) {
		rc = CVC_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < nacc; i++)
		if ((rc = acc_init(&accs[i], cx->map.nslots, cx->opts.classes)))
			goto out;

	/* A database read without upgrading (read-only, older than schema 4)
	 * has no launch_ns: every activity then reads as launched nowhere. */
	if ((rc = an_prepare(db,
			  cx->has_launch_col
				  ? "SELECT kind, start_ns, end_ns, name_id, id, launch_ns FROM activities "
				    "WHERE run_id=?1 AND rank=?2 AND device=?3 ORDER BY start_ns"
				  : "SELECT kind, start_ns, end_ns, name_id, id, NULL FROM activities "
				    "WHERE run_id=?1 AND rank=?2 AND device=?3 ORDER BY start_ns",
			  &st)))
		goto out;
	sqlite3_bind_int64(st, 1, run->id);
	sqlite3_bind_int(st, 2, rank);
	sqlite3_bind_int(st, 3, device);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int kind = sqlite3_column_int(st, 0);
		int64_t s = sqlite3_column_int64(st, 1);
		int64_t e = sqlite3_column_int64(st, 2);
		struct name_ent ne = {0};

		if (kind != CVC_ACT_KERNEL && kind != CVC_ACT_MEMCPY && kind != CVC_ACT_MEMSET)
			continue;
		if ((rc = an_time_check(db, sqlite3_column_int64(st, 4), s, e)))
			goto out;
		if (e < s)
			e = s;
		if (kind == CVC_ACT_KERNEL &&
		    (rc = kernel_class(db, cx, sqlite3_column_int64(st, 3), &ne)))
			goto out;
		row++;
		if (cx->opts.by != CVC_BY_STEP) {
			acc_feed(&accs[0], kind, s, e, &ne, 1);
			continue;
		}
		if (laccs && sqlite3_column_type(st, 5) != SQLITE_NULL) {
			/* Whole, in start order: each step's mergers stay sorted. */
			long k = an_launch_step(&ws, sqlite3_column_int64(st, 5));

			launched++;
			if (k >= 0)
				acc_feed(&laccs[k], kind, s, e, &ne, 1);
		}
		feed_windows(&ws, accs, step_last, row, kind, s, e, &ne);
	}
	if (r != SQLITE_DONE) {
		rc = an_db_err(db, "reading activities");
		goto out;
	}
	if (cx->opts.by != CVC_BY_STEP) {
		if (row > 0)
			rc = row_from_acc(db, rb, run, rank, device, -1, &accs[0], &cx->map);
		if (!rc && row > 0)
			rb->r[rb->n - 1].clock_offset_ns = offset;
		goto out;
	}
	if (launched)
		rc = launch_rows(db, cx, run, rank, device, offset, &ws, laccs, rb);
	else
		rc = step_rows(db, cx, run, rank, device, offset, &ws, accs, rb,
			       host ? CVC_STEP_BY_HOST_CLIP : CVC_STEP_BY_GPU_CLIP);
out:
	sqlite3_finalize(st);
	if (accs)
		for (size_t i = 0; i < nacc; i++)
			free(accs[i].cls);
	free(accs);
	if (laccs)
		for (size_t i = 0; i < ws.nsteps; i++)
			free(laccs[i].cls);
	free(laccs);
	free(step_last);
	an_winset_release(&ws);
	return rc;
}

/* ---- runs ------------------------------------------------------------------------- */

cvc_status an_runs_load(cvc_db *db, const char *name, struct an_run **runs, size_t *nruns)
{
	sqlite3_stmt *st = NULL;
	struct an_run *v = NULL;
	size_t n = 0, cap = 0;
	cvc_status rc;
	int r;

	*runs = NULL;
	*nruns = 0;
	if ((rc = an_prepare(db,
			  "SELECT id, name, coalesce(world_size, 0) FROM runs "
			  "WHERE ?1 IS NULL OR name=?1 ORDER BY id",
			  &st)))
		return rc;
	if (name)
		sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *nm = (const char *)sqlite3_column_text(st, 1);

		if (n == cap) {
			rc = cvc_grow(&v, &cap, cap + 1, sizeof *v, 8);
			if (rc != CVC_OK)
				goto out;
		}
		v[n].id = sqlite3_column_int64(st, 0);
		v[n].world_size = sqlite3_column_int(st, 2);
		if (nm)
			copy_trunc(v[n].name, sizeof v[n].name, nm);
		else
			snprintf(v[n].name, sizeof v[n].name, "run%lld", (long long)v[n].id);
		n++;
	}
	if (r != SQLITE_DONE) {
		rc = an_db_err(db, "reading runs");
		goto out;
	}
	if (name && n == 0)
		rc = cvc_db_fail(db, CVC_ERR_NOTFOUND, "'%s': no run named '%s'",
				 cvc_db_path(db), name);
out:
	sqlite3_finalize(st);
	if (rc) {
		free(v);
		return rc;
	}
	*runs = v;
	*nruns = n;
	return CVC_OK;
}

cvc_status an_each_device(cvc_db *db, int64_t run_id,
			  cvc_status (*fn)(int rank, int device, void *user), void *user)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc;
	int r;

	if ((rc = an_prepare(db,
			     "SELECT DISTINCT rank, device FROM activities WHERE run_id=? "
			     "ORDER BY rank, device",
			     &st)))
		return rc;
	sqlite3_bind_int64(st, 1, run_id);
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = fn(sqlite3_column_int(st, 0), sqlite3_column_int(st, 1), user)))
			goto out;
	if (r != SQLITE_DONE)
		rc = an_db_err(db, "reading devices");
out:
	sqlite3_finalize(st);
	return rc;
}

cvc_status an_time_check(cvc_db *db, int64_t id, int64_t s, int64_t e)
{
	/* Lengths and unions must fit (cvc_db.h, CVC_TIME_LIMIT_NS): a
	 * database written by hand, or before the window was checked. */
	if (s < -TIME_LIMIT_NS || s > TIME_LIMIT_NS || e < -TIME_LIMIT_NS || e > TIME_LIMIT_NS)
		return cvc_db_fail(db, CVC_ERR_FORMAT,
				   "'%s': activity %lld: time %lld..%lld ns is out of range",
				   cvc_db_path(db), (long long)id, (long long)s, (long long)e);
	return CVC_OK;
}

/* One run's devices, each swept (an_each_device's callback). */
struct run_sweep {
	cvc_db *db;
	struct an_ctx *cx;
	const struct an_run *run;
	struct rowbuf *rb;
};

static cvc_status sweep_one(int rank, int device, void *user)
{
	struct run_sweep *w = user;

	return sweep_device(w->db, w->cx, w->run, rank, device, w->rb);
}

static cvc_status sweep_run(cvc_db *db, struct an_ctx *cx, const struct an_run *run,
			    struct rowbuf *rb)
{
	struct run_sweep w = {db, cx, run, rb};

	return an_each_device(db, run->id, sweep_one, &w);
}

static cvc_status classify_missing(cvc_db *db)
{
	cvc_status rc;

	if ((rc = cvc_db_begin(db)))
		return rc;
	if ((rc = cvc_classify_db(db, NULL, 0))) {
		cvc_db_rollback(db);
		return rc;
	}
	return cvc_db_commit(db);
}

static cvc_status an_compile_regex(cvc_db *db, const char *pat, struct an_ctx *cx)
{
	int err = 0;
	PCRE2_SIZE off = 0;

	if (!pat)
		pat = DEFAULT_STEP_REGEX;
	/* '' matches every range: each would be a step of its own */
	if (!pat[0])
		return cvc_db_fail(db, CVC_ERR_USAGE, "--step-regex: expected a pattern naming "
				   "the step ranges, got ''");
	cx->re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
	if (!cx->re) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(err, msg, sizeof msg);
		return cvc_db_fail(db, CVC_ERR_USAGE, "step regex '%s': offset %zu: %s", pat,
				   (size_t)off, (const char *)msg);
	}
	cx->md = pcre2_match_data_create_from_pattern(cx->re, NULL);
	if (!cx->md)
		return CVC_ERR_NOMEM;
	return CVC_OK;
}

/* Whether activities has launch_ns: a database older than schema 4 read
 * without upgrading (read-only) does not. */
cvc_status an_has_launch_col(cvc_db *db, int *has)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc;
	int r;

	*has = 0;
	if ((rc = an_prepare(db, "SELECT 1 FROM pragma_table_info('activities') "
			      "WHERE name='launch_ns'", &st)))
		return rc;
	if ((r = sqlite3_step(st)) == SQLITE_ROW)
		*has = 1;
	else if (r != SQLITE_DONE)
		rc = an_db_err(db, "reading the activities table's columns");
	sqlite3_finalize(st);
	return rc;
}

static void an_ctx_release(struct an_ctx *cx)
{
	pcre2_match_data_free(cx->md);
	pcre2_code_free(cx->re);
	map_release(&cx->map);
	cx->md = NULL;
	cx->re = NULL;
}

cvc_status cvc_analyze_run(cvc_db *db, const cvc_analyze_opts *opts, cvc_breakdown **rows,
			   size_t *nrows)
{
	struct an_ctx cx;
	struct an_run *runs = NULL;
	size_t nruns = 0;
	struct rowbuf rb = {0};
	cvc_status rc;

	*rows = NULL;
	*nrows = 0;
	memset(&cx, 0, sizeof cx);
	if (opts)
		cx.opts = *opts;
	if ((rc = an_runs_load(db, cx.opts.run, &runs, &nruns)))
		goto out;
	if (cx.opts.by == CVC_BY_STEP && (rc = an_compile_regex(db, cx.opts.step_regex, &cx)))
		goto out;
	if ((rc = map_load(db, &cx.map)) || (rc = an_has_launch_col(db, &cx.has_launch_col)))
		goto out;
	/* Classify at most once; a read-only file falls back to HTA's rule. */
	cx.may_classify = !sqlite3_db_readonly(cvc_db_sqlite(db), "main");
	for (size_t i = 0; i < nruns; i++) {
		rc = sweep_run(db, &cx, &runs[i], &rb);
		if (rc == CVC_ERR_NOTFOUND && cx.may_classify) {
			cx.may_classify = 0;
			if ((rc = classify_missing(db)) || (rc = map_load(db, &cx.map)))
				goto out;
			/* Start over: rows already made used the same labels, but
			 * redoing them keeps the code simple and the cost is one pass. */
			cvc_breakdown_free(rb.r, rb.n);
			memset(&rb, 0, sizeof rb);
			i = (size_t)-1;
			continue;
		}
		if (rc)
			goto out;
	}
out:
	an_ctx_release(&cx);
	free(runs);
	if (rc) {
		cvc_breakdown_free(rb.r, rb.n);
		return rc;
	}
	*rows = rb.r;
	*nrows = rb.n;
	return CVC_OK;
}

void cvc_breakdown_free(cvc_breakdown *rows, size_t nrows)
{
	if (!rows)
		return;
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].classes);
	free(rows);
}
