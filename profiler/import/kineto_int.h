/*
 * kineto_int.h - what the three parts of the Kineto importer share: the
 * reader's state (struct kin), its bounds, and the helpers each part calls.
 * kineto.c reads the document and its top-level values, kineto_event.c
 * turns one event into rows, kineto_finish.c writes what needed the whole
 * file.
 */
#ifndef CVC_KINETO_INT_H
#define CVC_KINETO_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"
#include "json_scan.h"
#include "oplink.h"

/* Bounds that keep a corrupt file from eating memory. */
#define KIN_MAX_VALUE ((size_t)256 << 20)  /* one event or top-level value */
#define KIN_MAX_DEVICES 4096
#define KIN_MAX_DEVICE_INDEX 65535
#define KIN_MAX_RPC (1 << 22)
#define KIN_MAX_LAUNCH ((size_t)1 << 22)  /* runtime launches kept for nesting */
/* Between two launches of one thread, 1 ms or more is the thread waiting
 * (a synchronisation, another thread's turn), not launch work: in the
 * shared MoE training trace (deepseek-train-h800-ep64) 99% of the
 * intervals are under 0.5 ms, and their mean under 0.5 ms and under 1 ms
 * is the same 45.3 us (docs/MODELS.md "Host time per launch"). */
#define KIN_HOST_STALL_NS ((int64_t)1000000)
#define KIN_PROGRESS_STEP ((int64_t)4 << 20)

/* Nesting around an event: the document object and the traceEvents array. */
#define EV_DEPTH 2

struct devprop {
	int64_t id;
	char *name;
	int64_t sms, mem, cc_major, cc_minor;
};

/* Collective description as the trace gives it; strings are malloc'd. */
struct coll {
	char *name, *dtype, *pg_name, *pg_desc, *pg_ranks;
	int64_t in_nelems, out_nelems, group_size;
};

struct rpc {
	int64_t ext;
	size_t seq;  /* file order, so a repeated External id resolves to the last */
	struct coll c;
};

struct pending {
	int64_t act_id, ext;
};

struct meta {
	char *key, *value;
};

struct kin {
	cvc_db *db;
	int64_t run_id;
	const char *path;
	const cvc_import_opts *opts;
	js_src *src;

	cvc_import_stats n;  /* what this file added (n.files stays 0) */
	int rank, rank_known, prov_rank, have_prov;
	int64_t world_size;
	char *nccl_version, *schema, *cupti, *cudart;
	int64_t act_id_floor, range_id_floor, shape_id_floor;  /* ids before this file */
	int64_t host_pid;
	int seen_events;

	struct devprop *props;
	size_t nprops;
	int *devs;  /* devices GPU events ran on, in order of first use */
	size_t ndevs;

	struct rpc *rpcs;
	size_t nrpc, caprpc;
	struct pending *pend;
	size_t npend, cappend;
	struct meta *metas;
	size_t nmeta, capmeta;

	/* ops kept with shapes and launch calls, linked by nesting at the end;
	 * kernels whose External id is their correlation id (older Kineto) vs
	 * not. */
	oplink link;
	int64_t n_ext_corr, n_ext_own;
	int64_t n_hip_ext;   /* HIP launches linked by their External id (ROCm) */
	/* correlation id -> host time of the launching call, kept in a
	 * temporary table (kineto_finish.c) rather than in memory: a trace may
	 * have millions of launches, and the kernels may come before or after
	 * their calls in the file */
	struct sqlite3_stmt *launch_ins;
	int64_t n_launch_times;

	char *tmp;  /* decode scratch, grown to the longest string */
	size_t tmpcap;
	int64_t next_progress;
};

/* ---- kineto.c ---------------------------------------------------------------- */

/* CVC_ERR_NOMEM naming the file. */
cvc_status kin_nomem(struct kin *k);

/* The failure jc_fail() recorded in c, naming the file. */
cvc_status kin_jc_report(struct kin *k, const jcur *c);

/* CVC_ERR_FORMAT at byte off of the event being read (k->n.events - 1),
 * naming field when not NULL. */
cvc_status kin_ev_fail(struct kin *k, int64_t off, const char *field, const char *what);

/* Decodes string v into k->tmp (NUL-terminated); its length, or -1 when out
 * of memory. */
long kin_decode_tmp(struct kin *k, const jval *v);

/* String value as a malloc'd C string; other values as their JSON text;
 * NULL when out of memory. */
char *kin_dup_value(struct kin *k, const jval *v);

/* Frees c's strings and zeroes it. */
void kin_coll_free(struct coll *c);

/* ---- kineto_event.c ---------------------------------------------------------- */

/* One event, the object text p[0..n) at byte off: decoded as far as needed
 * and stored. */
cvc_status kin_handle_event(struct kin *k, const char *p, size_t n, int64_t off);

/* The rank rows of this file go to; picks a provisional one on first use. */
cvc_status kin_cur_rank(struct kin *k, int *rank);

/* Writes collective c for activity act_id. */
cvc_status kin_store_coll(struct kin *k, int64_t act_id, const struct coll *c);

/* ---- kineto_finish.c --------------------------------------------------------- */

/* After the document: rank, links, devices, run and rank rows, source row. */
cvc_status kin_finish(struct kin *k);

/* Notes that the runtime or driver call with correlation id corr ran on the
 * host at ts_ns; kin_finish() gives it to the activities with that id. */
cvc_status kin_launch_time_add(struct kin *k, int64_t corr, int64_t ts_ns);

/* Frees what kin_launch_time_add() holds (the database keeps nothing). */
void kin_launch_times_release(struct kin *k);

#endif
