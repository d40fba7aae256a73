/*
 * analyze_int.h - what analyze.c and analyze_coll.c share inside the
 * library: the run list and the sweep context.  Not installed.
 */
#ifndef CVC_ANALYZE_INT_H
#define CVC_ANALYZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_analyze.h"

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
	void *re;               /* pcre2_code * of the step regex */
	void *md;               /* pcre2_match_data * */
};

/*
 * Runs to analyse: the one named (CVC_ERR_NOTFOUND when absent) or all, by
 * id.  *runs is malloc'd (caller frees), possibly empty.
 */
cvc_status an_runs_load(cvc_db *db, const char *name, struct an_run **runs, size_t *nruns);


#endif
