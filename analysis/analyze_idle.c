/*
 * analyze_idle.c - where a device's idle time goes: host wait, kernel wait
 * and other (cvc_analyze.h, "idle time").  One pass per device over its
 * activities in start order, as the breakdown sweeps them, so the gaps add
 * up to the breakdown's idle time.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_analyze.h"
#include "analysis/analyze_int.h"

/* The gap being closed: the activities that start at its end decide it. */
struct gap {
	int open;
	int64_t from, to;
	int64_t min_launch;     /* earliest known launch of those activities */
	int nknown;             /* how many of them have a launch time */
};

static void gap_close(struct gap *g, int64_t kernel_wait_ns, cvc_idle_stat *s)
{
	int64_t len = g->to - g->from;

	if (!g->open)
		return;
	g->open = 0;
	s->gaps++;
	s->idle_ns += len;
	if (g->nknown == 0)
		s->unlaunched_gaps++;
	/* the host launched all of it after the GPU ran dry */
	if (g->nknown > 0 && g->min_launch > g->from)
		s->host_wait_ns += len;
	else if (len < kernel_wait_ns)
		s->kernel_wait_ns += len;
	else
		s->other_ns += len;
}

static cvc_status sweep(cvc_db *db, sqlite3_stmt *st, int64_t kernel_wait_ns, cvc_idle_stat *s,
			int64_t *nact)
{
	struct gap g = {0};
	int64_t end = 0;
	int r;

	*nact = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t a = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
		int known = sqlite3_column_type(st, 2) == SQLITE_INTEGER;
		int64_t launch = sqlite3_column_int64(st, 2);

		cvc_status rc;

		/* the breakdown's window */
		if ((rc = an_time_check(db, sqlite3_column_int64(st, 3), a, e)))
			return rc;
		if (e < a)
			e = a;
		if (g.open && a > g.to)
			gap_close(&g, kernel_wait_ns, s);
		if (*nact > 0 && a > end) {
			g.open = 1;
			g.from = end;
			g.to = a;
			g.nknown = 0;
			g.min_launch = INT64_MAX;
		}
		if (g.open && a == g.to && known) {
			g.nknown++;
			if (launch < g.min_launch)
				g.min_launch = launch;
		}
		if (*nact == 0 || e > end)
			end = e;
		(*nact)++;
	}
	if (r != SQLITE_DONE)
		return an_db_err(db, "reading activities");
	gap_close(&g, kernel_wait_ns, s);
	return CVC_OK;
}

static cvc_status device_row(cvc_db *db, const struct an_run *run, int rank, int device,
			     int launch_col, int64_t kernel_wait_ns, cvc_idle_stat *s, int *any)
{
	sqlite3_stmt *st = NULL;
	int64_t nact = 0;
	cvc_status rc;
	char sql[320];

	snprintf(sql, sizeof sql,
		 "SELECT start_ns, end_ns, %s, id FROM activities WHERE run_id=?1 AND rank=?2 "
		 "AND device=?3 AND kind IN (%d, %d, %d) ORDER BY start_ns",
		 launch_col ? "launch_ns" : "NULL", CVC_ACT_KERNEL, CVC_ACT_MEMCPY,
		 CVC_ACT_MEMSET);
	if ((rc = an_prepare(db, sql, &st)))
		return rc;
	sqlite3_bind_int64(st, 1, run->id);
	sqlite3_bind_int(st, 2, rank);
	sqlite3_bind_int(st, 3, device);
	memset(s, 0, sizeof *s);
	snprintf(s->run, sizeof s->run, "%s", run->name);
	s->run_id = run->id;
	s->rank = rank;
	s->device = device;
	rc = sweep(db, st, kernel_wait_ns, s, &nact);
	sqlite3_finalize(st);
	*any = nact > 0;
	return rc;
}

/* What an_each_device carries to each device of one run. */
struct idle_run {
	cvc_db *db;
	const struct an_run *run;
	int launch_col;
	int64_t kernel_wait_ns;
	cvc_idle_stat **out;
	size_t *n, *cap;
};

static cvc_status idle_device(int rank, int device, void *user)
{
	struct idle_run *w = user;
	cvc_idle_stat s;
	cvc_status rc;
	int any = 0;

	if ((rc = device_row(w->db, w->run, rank, device, w->launch_col, w->kernel_wait_ns, &s,
			     &any)) || !any)
		return rc;
	if (*w->n == *w->cap && (rc = cvc_grow(w->out, w->cap, *w->cap + 1, sizeof **w->out, 16)))
		return rc;
	(*w->out)[(*w->n)++] = s;
	return CVC_OK;
}

cvc_status cvc_analyze_idle(cvc_db *db, const cvc_analyze_opts *opts, int64_t kernel_wait_ns,
			    cvc_idle_stat **rows, size_t *nrows)
{
	struct an_run *runs = NULL;
	cvc_idle_stat *out = NULL;
	size_t nruns = 0, n = 0, cap = 0;
	int launch_col = 0;
	cvc_status rc;

	*rows = NULL;
	*nrows = 0;
	if ((rc = an_runs_load(db, opts ? opts->run : NULL, &runs, &nruns)) ||
	    (rc = an_has_launch_col(db, &launch_col)))
		goto out;
	for (size_t i = 0; i < nruns; i++) {
		struct idle_run w = {db, &runs[i], launch_col, kernel_wait_ns, &out, &n, &cap};

		if ((rc = an_each_device(db, runs[i].id, idle_device, &w)))
			goto out;
	}
	*rows = out;
	*nrows = n;
	out = NULL;
out:
	free(out);
	free(runs);
	return rc;
}
