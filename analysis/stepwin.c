/*
 * stepwin.c - the step windows of `cvc analyze --by step`: the ranges whose
 * name the step regex matches, merged per step number, and the step a host
 * time (an activity's launch) falls in.  The sweep over activities is in
 * analyze.c.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcre2.h>
#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "analysis/analyze_int.h"

static cvc_status db_err(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "'%s': %s: %s", cvc_db_path(db), what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

void an_winset_release(struct an_winset *ws)
{
	free(ws->w);
	free(ws->steps);
	memset(ws, 0, sizeof *ws);
}

static int win_cmp_start(const void *pa, const void *pb)
{
	const struct an_win *a = pa, *b = pb;

	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	return (a->e > b->e) - (a->e < b->e);
}

static int win_cmp_step(const void *pa, const void *pb)
{
	const struct an_win *a = pa, *b = pb;

	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	return win_cmp_start(pa, pb);
}

/* Parses a decimal step number; 0 when it is not one. */
static int parse_step(const char *s, size_t len, int64_t *out)
{
	char buf[32];
	char *end = NULL;
	long long v;

	if (len == 0 || len >= sizeof buf)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || *end)
		return 0;
	*out = v;
	return 1;
}

/*
 * Reads the matching ranges of kind (device >= 0: only that device) into ws,
 * then sorts and merges them into per-step windows.
 */
cvc_status an_load_windows(cvc_db *db, struct an_ctx *cx, int64_t run_id, int rank, int kind,
			   int device, struct an_winset *ws)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc = CVC_OK;
	int r;

	ws->n = 0;
	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT r.start_ns, r.end_ns, s.value FROM ranges r "
			       "JOIN strings s ON s.id = r.name_id "
			       "WHERE r.run_id=?1 AND r.rank=?2 AND r.kind=?3 "
			       "AND (?4 < 0 OR r.device=?4)",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "preparing query");
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, rank);
	sqlite3_bind_int(st, 3, kind);
	sqlite3_bind_int(st, 4, device);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 2);
		int len = sqlite3_column_bytes(st, 2);
		int m;
		struct an_win w = {0};

		if (!name)
			continue;
		m = pcre2_match(cx->re, (PCRE2_SPTR)name, (PCRE2_SIZE)len, 0, 0, cx->md, NULL);
		if (m == PCRE2_ERROR_NOMATCH)
			continue;
		if (m < 0) {
			rc = cvc_db_fail(db, CVC_ERR_USAGE,
					 "step regex: matching '%.80s' failed (pcre2 error %d)",
					 name, m);
			goto out;
		}
		w.s = sqlite3_column_int64(st, 0);
		w.e = sqlite3_column_int64(st, 1);
		if (w.e < w.s)
			w.e = w.s;
		w.step = INT64_MIN; /* numbered below when the capture is absent */
		if (m >= 2) {
			PCRE2_SIZE *ov = pcre2_get_ovector_pointer(cx->md);

			if (ov[2] != PCRE2_UNSET &&
			    !parse_step(name + ov[2], (size_t)(ov[3] - ov[2]), &w.step))
				w.step = INT64_MIN;
		}
		if (ws->n == ws->cap) {
			rc = cvc_grow(&ws->w, &ws->cap, ws->cap + 1, sizeof *ws->w, 64);
			if (rc != CVC_OK)
				goto out;
		}
		ws->w[ws->n++] = w;
	}
	if (r != SQLITE_DONE) {
		rc = db_err(db, "reading ranges");
		goto out;
	}
	if (ws->n == 0)
		goto out;
	/* Unnumbered windows take their position in start order. */
	qsort(ws->w, ws->n, sizeof *ws->w, win_cmp_start);
	for (size_t i = 0; i < ws->n; i++)
		if (ws->w[i].step == INT64_MIN)
			ws->w[i].step = (int64_t)i;
	/* Merge the windows of each step; windows of different steps may overlap. */
	qsort(ws->w, ws->n, sizeof *ws->w, win_cmp_step);
	{
		size_t out = 0;

		free(ws->steps);
		ws->steps = malloc(ws->n * sizeof *ws->steps);
		ws->nsteps = 0;
		if (!ws->steps) {
			rc = CVC_ERR_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < ws->n; i++) {
			struct an_win *prev = out ? &ws->w[out - 1] : NULL;

			if (prev && prev->step == ws->w[i].step && ws->w[i].s <= prev->e) {
				if (ws->w[i].e > prev->e)
					prev->e = ws->w[i].e;
				continue;
			}
			if (!prev || prev->step != ws->w[i].step)
				ws->steps[ws->nsteps++] = ws->w[i].step;
			ws->w[out] = ws->w[i];
			ws->w[out].step_idx = ws->nsteps - 1;
			out++;
		}
		ws->n = out;
	}
	qsort(ws->w, ws->n, sizeof *ws->w, win_cmp_start);
	for (size_t i = 0; i < ws->n; i++)
		ws->w[i].max_e = i && ws->w[i - 1].max_e > ws->w[i].e ? ws->w[i - 1].max_e
								      : ws->w[i].e;
out:
	sqlite3_finalize(st);
	return rc;
}

/*
 * The step whose host window holds launch time t: of the windows holding
 * it, the one that started last (the innermost, when a trace nests step
 * ranges); -1 when none does.  Windows are half-open, as activities are.
 */
long an_launch_step(const struct an_winset *ws, int64_t t)
{
	size_t lo = 0, hi = ws->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ws->w[mid].s <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j-- > 0 && ws->w[j].max_e > t;)
		if (t < ws->w[j].e)
			return (long)ws->w[j].step_idx;
	return -1;
}
