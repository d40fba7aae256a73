/*
 * analyze_int.h - what analyze.c and analyze_coll.c share inside the
 * library: the run list and the sweep context.  Not installed.
 */
#ifndef CVC_ANALYZE_INT_H
#define CVC_ANALYZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_analyze.h"

struct sqlite3_stmt;

/* Sums that may pass 2^63 (durations of many kernels, each below 2^63 ns:
 * cvc_db.h, CVC_TIME_LIMIT_NS) are kept in 128 bits and checked once. */
__extension__ typedef unsigned __int128 an_u128;

struct an_run {
	int64_t id;
	char name[128];
	int world_size;         /* 0 = unknown */
};

struct name_ent;
struct class_slot;

/* name_id -> class slot; defined in analyze.c. */
struct an_class_map {
	struct name_ent *ents;
	size_t cap, used;
	struct class_slot *slots;
	size_t nslots;
	size_t uncls, uncls_comm;
};

struct an_ctx {
	cvc_analyze_opts opts;
	struct an_class_map map;
	int may_classify;       /* a miss may still run the classifier */
	int has_launch_col;     /* activities.launch_ns exists (schema 4) */
	void *re;               /* pcre2_code * of the step regex */
	void *md;               /* pcre2_match_data * */
};

/*
 * Runs to analyse: the one named (CVC_ERR_NOTFOUND when absent) or all, by
 * id.  *runs is malloc'd (caller frees), possibly empty.
 */
cvc_status an_runs_load(cvc_db *db, const char *name, struct an_run **runs, size_t *nruns);

/* The db's error for `what` failing, its message naming the file. */
cvc_status an_db_err(cvc_db *db, const char *what);
/* Prepares sql on db; *st NULL and the message in db on failure. */
cvc_status an_prepare(cvc_db *db, const char *sql, struct sqlite3_stmt **st);
/* fn(rank, device, user) for each device of the run with activities, by
 * rank then device; stops at the first non-OK status and returns it. */
cvc_status an_each_device(cvc_db *db, int64_t run_id,
			  cvc_status (*fn)(int rank, int device, void *user), void *user);
/* CVC_ERR_FORMAT naming activity id when [s, e) leaves the window sums
 * stay exact in (cvc_db.h, CVC_TIME_LIMIT_NS); CVC_OK otherwise. */
cvc_status an_time_check(cvc_db *db, int64_t id, int64_t s, int64_t e);

/* Whether activities has launch_ns (schema 4): a database older than that
 * read without upgrading (read-only) does not. */
cvc_status an_has_launch_col(cvc_db *db, int *has);

/* ---- step windows (stepwin.c) ---- */

struct an_win {
	int64_t s, e;
	int64_t step;
	size_t step_idx;   /* index into the step list */
	int64_t max_e;     /* max end over windows [0..this], for the overlap search */
};

struct an_winset {
	struct an_win *w;
	size_t n, cap;
	int64_t *steps;    /* distinct step numbers, ascending */
	size_t nsteps;
};

void an_winset_release(struct an_winset *ws);

/*
 * Reads the ranges of kind (device >= 0: only that device) whose name the
 * step regex matches into ws, merged per step number (windows of one step
 * become disjoint), sorted by start with max_e set.  ws->n is 0 when none.
 */
cvc_status an_load_windows(cvc_db *db, struct an_ctx *cx, int64_t run_id, int rank, int kind,
			   int device, struct an_winset *ws);

/*
 * The index into ws->steps of the step whose window holds host time t: of
 * the windows holding it, the one that started last (the innermost, when a
 * trace nests step ranges); -1 when none does.  Windows are half-open.
 */
long an_launch_step(const struct an_winset *ws, int64_t t);

#endif
