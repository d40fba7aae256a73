/*
 * materialize_int.h - what the spool's reader shares between its files:
 * materialize.c (framing, records, the direct joins) and
 * materialize_graph.c (NCCL sizes of kernels replayed from CUDA graphs).
 */
#ifndef CVC_MATERIALIZE_INT_H
#define CVC_MATERIALIZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"

/* Correlation id -> external id, open addressing; key 0 is "empty". */
struct ext_slot {
	uint32_t corr;
	uint32_t kind;
	uint64_t ext;
};

struct mat {
	const char *spool;
	const unsigned char *base;
	size_t size;
	cvc_db *db;
	int64_t run_id;
	int rank;
	int have_proc;
	int64_t *sid2id;        /* spool string id -> strings.id, 0 = undefined */
	const char **sid2str;   /* spool string id -> bytes in the map */
	uint32_t *sid2len;
	uint32_t nsid;
	struct ext_slot *ext;       /* correlation -> framework external id */
	size_t next_mask;
	struct ext_slot *calls;     /* correlation -> host time of its API call
				       (ext holds the int64 time), NULL: none */
	size_t calls_mask;
	struct ext_slot *launch;    /* correlation -> NCCL launch id */
	size_t launch_mask;
	struct cvc_spool_coll *colls; /* sorted by launch_id */
	unsigned char *coll_used;
	size_t ncolls;
	struct cvc_spool_marker *marks;
	size_t nmarks, capmarks;
	int64_t clock[4];       /* start cupti, start real, end cupti, end real */
	int have_clock[4];
	cvc_materialize_stats *stats;
	int64_t out_of_range;   /* records no GPU produced: dropped and counted */
	char *err;
	size_t errlen;
	uint32_t version;       /* the spool's: 1 has no graph records */
	/* CUDA graphs (materialize_graph.c): nodes NCCL launches made, and
	 * clones, each sorted by node id; what joined through them */
	struct cvc_spool_graph *gnodes, *clones;
	size_t ngnodes, nclones, gn_fill, cl_fill;
	int64_t graph_joined;   /* replayed kernels joined through their node */
	int64_t graph_unjoined; /* replayed NCCL kernels that found no launch */
	/* NVTX ranges on the GPU (materialize_project.c): API calls by
	 * (thread, start), device activities by correlation */
	size_t napi;            /* API records in the spool (mat_scan) */
	struct mat_launch *launches;
	size_t nlaunches, caplaunches;
	struct mat_span *spans;
	size_t nspans, capspans;
	int64_t projected;      /* GPU-timeline ranges made */
};

struct mat_launch {
	int64_t start_ns;
	int64_t tid;
	uint32_t corr;
};

struct mat_span {
	int64_t start_ns, end_ns;
	uint32_t corr;
	int device;
};


/* Sets err to "'spool': byte off: what"; returns st. */
cvc_status mat_fail(struct mat *m, cvc_status st, size_t off, const char *what);

/* Sets err to the database's message; returns st. */
cvc_status mat_dbfail(struct mat *m, cvc_status st);

/* Copies string sid into buf (cut to cap - 1 bytes, NUL-terminated); -1 if undefined. */
int mat_str(const struct mat *m, uint32_t sid, char *buf, size_t cap);

/*
 * Stores the NCCL calls of launch launch_id (-1: none) for kernel
 * activity_id; *joined says whether that launch was found.
 */
cvc_status mat_coll(struct mat *m, size_t off, int64_t activity_id, int64_t launch_id,
		    int *joined);

/* ---- materialize_graph.c ---- */

/* Allocates the graph tables for the m->ngnodes and m->nclones mat_scan counted. */
cvc_status mat_graph_alloc(struct mat *m);

/* Keeps one GNODE or GCLONE record (prefill walk). */
void mat_graph_collect(struct mat *m, uint32_t type, const struct cvc_spool_graph *g);

/* Sorts the tables once the walk collected them. */
void mat_graph_sort(struct mat *m);

/*
 * Kernel activity_id (record s, graph_node_id != 0) had no direct NCCL
 * join: follows its node through the clones to the NCCL launch that
 * created it and stores that launch's calls; counts joined and unjoined.
 */
cvc_status mat_graph_join(struct mat *m, size_t off, int64_t activity_id,
			  const struct cvc_spool_act *s);

/* run_meta nccl_graph_replay_joined / _unjoined, when the spool has either. */
cvc_status mat_graph_finish(struct mat *m);

/* Frees the graph tables. */
void mat_graph_free(struct mat *m);

/* ---- materialize_project.c ---- */

/* Keeps an API call (correlation, start, thread) for the projection. */
cvc_status mat_proj_launch(struct mat *m, uint32_t corr, int64_t start_ns, int64_t tid);

/* Keeps a device activity's correlation, device and span (none kept when
 * the spool has no API records). */
cvc_status mat_proj_span(struct mat *m, uint32_t corr, int device, int64_t s, int64_t e);

/* Sorts what was kept; before the markers are paired. */
void mat_proj_sort(struct mat *m);

/* Adds the GPU-timeline ranges of NVTX range cpu: one per device its
 * launches ran on, first start to last end. */
cvc_status mat_proj_range(struct mat *m, const cvc_range *cpu);

void mat_proj_free(struct mat *m);

#endif
