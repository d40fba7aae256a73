/*
 * kineto_finish.c - the rows of a Kineto trace that needed the whole file:
 * the real rank once distributedInfo is known (it may follow the events),
 * collective sizes joined to NCCL kernels by External id, op -> kernel
 * links, devices, and the run, rank and source rows.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "import_int.h"
#include "kineto_int.h"

static int cmp_rpc(const void *a, const void *b)
{
	const struct rpc *x = a, *y = b;

	if (x->ext != y->ext)
		return (x->ext > y->ext) - (x->ext < y->ext);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_rpc_ext(const void *a, const void *b)
{
	const struct rpc *x = a, *y = b;

	return (x->ext > y->ext) - (x->ext < y->ext);
}

static cvc_status link_pending(struct kin *k)
{
	cvc_status st;

	if (k->npend == 0 || k->nrpc == 0)
		return CVC_OK;
	qsort(k->rpcs, k->nrpc, sizeof *k->rpcs, cmp_rpc);
	for (size_t i = 0; i < k->npend; i++) {
		struct rpc key = {.ext = k->pend[i].ext};
		struct rpc *hit = bsearch(&key, k->rpcs, k->nrpc, sizeof *k->rpcs, cmp_rpc_ext);

		while (hit && hit + 1 < k->rpcs + k->nrpc && hit[1].ext == hit->ext)
			hit++;

		if (hit && (st = kin_store_coll(k, k->pend[i].act_id, &hit->c)))
			return st;
	}
	return CVC_OK;
}

/* distributedInfo came after the events: move their rows to the real rank. */
static cvc_status move_rank(struct kin *k)
{
	static const char *const sql[3] = {
		"UPDATE activities SET rank=?1 WHERE run_id=?2 AND rank=?3 AND id>?4",
		"UPDATE ranges SET rank=?1 WHERE run_id=?2 AND rank=?3 AND id>?4",
		"UPDATE op_shapes SET rank=?1 WHERE run_id=?2 AND rank=?3 AND id>?4",
	};
	const int64_t floors[3] = {k->act_id_floor, k->range_id_floor, k->shape_id_floor};
	sqlite3 *sq = cvc_db_sqlite(k->db);

	for (int i = 0; i < 3; i++) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (sqlite3_prepare_v2(sq, sql[i], -1, &st, NULL) != SQLITE_OK)
			return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
					   sqlite3_errmsg(sq));
		sqlite3_bind_int(st, 1, k->rank);
		sqlite3_bind_int64(st, 2, k->run_id);
		sqlite3_bind_int(st, 3, k->prov_rank);
		sqlite3_bind_int64(st, 4, floors[i]);
		rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
					   sqlite3_errmsg(sq));
	}
	return CVC_OK;
}

static cvc_status rank_meta(struct kin *k, int rank, const char *name, const char *val)
{
	char key[96];

	snprintf(key, sizeof key, "rank%d.import.%s", rank, name);
	return cvc_db_run_meta_set(k->db, k->run_id, key, val);
}

/*
 * Op -> kernel links by nesting.  When every kernel's External id is its
 * correlation id (older Kineto), the ops' own External ids name no kernel
 * and could only collide with a kernel's by chance, so they are cleared
 * (-1) and nesting is the only link.
 */
static cvc_status link_ops(struct kin *k, int rank)
{
	char sql[256], val[32];
	cvc_status st;

	if (k->n.op_shapes == 0)
		return CVC_OK;
	/* ROCm: the HIP launches were linked by their External id (do_launch),
	 * which their kernels carry in place of a correlation id */
	if (k->n_hip_ext > 0) {
		snprintf(sql, sizeof sql,
			 "UPDATE activities SET correlation=external_id WHERE run_id=%lld AND "
			 "id>%lld AND kind=%d AND correlation IS NULL AND external_id>=0",
			 (long long)k->run_id, (long long)k->act_id_floor, (int)CVC_ACT_KERNEL);
		if ((st = cvc_db_exec(k->db, sql)))
			return st;
	}
	if (k->n_ext_corr > 0 && k->n_ext_own == 0) {
		snprintf(sql, sizeof sql, "UPDATE op_shapes SET external_id=-1 WHERE run_id=%lld AND id>%lld",
			 (long long)k->run_id, (long long)k->shape_id_floor);
		if ((st = cvc_db_exec(k->db, sql)))
			return st;
	}
	if ((st = oplink_write(&k->link, k->db, k->run_id, rank, &k->n.op_launches)))
		return st == CVC_ERR_NOMEM ? kin_nomem(k) : st;
	snprintf(val, sizeof val, "%lld", (long long)k->n.op_launches);
	if ((st = rank_meta(k, rank, "op_launches", val)))
		return st;
	if (k->link.dropped) {
		snprintf(val, sizeof val, "%lld", (long long)k->link.dropped);
		if ((st = rank_meta(k, rank, "op_launches_not_kept", val)))
			return st;
	}
	return CVC_OK;
}

/*
 * The host's launch work (oplink_host_time()): the launching threads, the
 * intervals between consecutive launches and their time in ns, as rank
 * metadata (integers: shards of one rank add up).  What a kernel launch
 * costs the host is host_launch_ns / host_launch_gaps.
 */
static cvc_status host_time(struct kin *k, int rank)
{
	int64_t busy, gaps, threads;
	char val[32];
	cvc_status st;

	oplink_host_time(&k->link, KIN_HOST_STALL_NS, &busy, &gaps, &threads);
	if (gaps == 0)
		return CVC_OK;
	snprintf(val, sizeof val, "%lld", (long long)threads);
	if ((st = rank_meta(k, rank, "host_launch_threads", val)))
		return st;
	snprintf(val, sizeof val, "%lld", (long long)gaps);
	if ((st = rank_meta(k, rank, "host_launch_gaps", val)))
		return st;
	snprintf(val, sizeof val, "%lld", (long long)busy);
	return rank_meta(k, rank, "host_launch_ns", val);
}

/*
 * Launch times go through a temporary table of the import's connection: it
 * lives outside the database file (nothing of it is committed), is emptied
 * for each file (correlation ids are one process's, so one rank's), and
 * lets one UPDATE give every activity its call's time however the file
 * orders calls and activities.  A correlation id seen twice (a runtime
 * call and the driver call under it, or two processes in one file) keeps
 * the earliest time.
 */
cvc_status kin_launch_time_add(struct kin *k, int64_t corr, int64_t ts_ns)
{
	sqlite3 *sq = cvc_db_sqlite(k->db);
	cvc_status st;

	if (!k->launch_ins) {
		if ((st = cvc_db_exec(k->db, "CREATE TEMP TABLE IF NOT EXISTS cvc_kin_launch("
					     "corr INTEGER PRIMARY KEY, ts INTEGER NOT NULL);"
					     "DELETE FROM temp.cvc_kin_launch;")))
			return st;
		if (sqlite3_prepare_v2(sq,
				       "INSERT INTO temp.cvc_kin_launch(corr, ts) VALUES(?1, ?2) "
				       "ON CONFLICT(corr) DO UPDATE SET ts=min(ts, excluded.ts)",
				       -1, &k->launch_ins, NULL) != SQLITE_OK)
			return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
					   sqlite3_errmsg(sq));
	}
	sqlite3_bind_int64(k->launch_ins, 1, corr);
	sqlite3_bind_int64(k->launch_ins, 2, ts_ns);
	if (sqlite3_step(k->launch_ins) != SQLITE_DONE) {
		sqlite3_reset(k->launch_ins);
		return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
				   sqlite3_errmsg(sq));
	}
	sqlite3_reset(k->launch_ins);
	k->n_launch_times++;
	return CVC_OK;
}

void kin_launch_times_release(struct kin *k)
{
	sqlite3_finalize(k->launch_ins);
	k->launch_ins = NULL;
}

/*
 * This file's activities take the time of the call with their correlation
 * id (ROCm's HIP activities: their External id, which do_launch() took as
 * the call's correlation).  An activity whose call is not in the file
 * (queued before the host trace began, or the file has no runtime events)
 * keeps NULL.
 */
static cvc_status set_launch_times(struct kin *k)
{
	char sql[512];
	cvc_status st;

	if (k->n_launch_times == 0)
		return CVC_OK;
	snprintf(sql, sizeof sql,
		 "UPDATE activities SET launch_ns=(SELECT ts FROM temp.cvc_kin_launch "
		 "WHERE corr=coalesce(activities.correlation, %s)) "
		 "WHERE run_id=%lld AND id>%lld;"
		 "DELETE FROM temp.cvc_kin_launch;",
		 k->n_hip_ext > 0 ? "activities.external_id" : "NULL",
		 (long long)k->run_id, (long long)k->act_id_floor);
	st = cvc_db_exec(k->db, sql);
	kin_launch_times_release(k);
	return st;
}

static const struct devprop *find_prop(const struct kin *k, int dev)
{
	for (size_t i = 0; i < k->nprops; i++)
		if (k->props[i].id == dev)
			return &k->props[i];
	return NULL;
}

/*
 * Two files that both say they are rank N of one run are two steps or two
 * jobs mixed up: merging them would double-count every kernel of that rank.
 */
static cvc_status check_rank_free(struct kin *k, int rank)
{
	sqlite3_stmt *st = NULL;
	int taken;

	if (sqlite3_prepare_v2(cvc_db_sqlite(k->db),
			       "SELECT 1 FROM ranks WHERE run_id=? AND rank=?", -1, &st,
			       NULL) != SQLITE_OK)
		return cvc_db_fail(k->db, CVC_ERR_DB, "'%s': %s", cvc_db_path(k->db),
				   sqlite3_errmsg(cvc_db_sqlite(k->db)));
	sqlite3_bind_int64(st, 1, k->run_id);
	sqlite3_bind_int(st, 2, rank);
	taken = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (taken)
		return cvc_db_fail(k->db, CVC_ERR_FORMAT,
				   "'%s': rank %d is already in this run (import each job's "
				   "ranks once, or use --run to start another run)",
				   k->path, rank);
	return CVC_OK;
}

cvc_status kin_finish(struct kin *k)
{
	char tool[256] = "", key[128];
	const struct devprop *gpu = NULL;
	cvc_run_info ri = {0};
	cvc_rank_info rk = {0};
	cvc_status st;
	int rank;

	if (k->rank_known && k->have_prov && k->prov_rank != k->rank &&
	    (st = move_rank(k)))
		return st;
	if ((st = kin_cur_rank(k, &rank)))
		return st;
	if ((st = link_pending(k)) || (st = link_ops(k, rank)) || (st = host_time(k, rank)) ||
	    (st = set_launch_times(k)))
		return st;
	for (size_t i = 0; i < k->ndevs; i++) {
		const struct devprop *d = find_prop(k, k->devs[i]);
		cvc_device_info di = {.rank = rank, .device = k->devs[i], .cc_major = -1,
				      .cc_minor = -1};

		if (d) {
			di.name = d->name;
			di.sm_count = d->sms > 0 && d->sms <= INT32_MAX ? (int)d->sms : 0;
			di.total_mem_bytes = d->mem > 0 ? d->mem : 0;
			di.cc_major = d->cc_major >= 0 && d->cc_major < 1000 ? (int)d->cc_major : -1;
			di.cc_minor = d->cc_minor >= 0 && d->cc_minor < 1000 ? (int)d->cc_minor : -1;
		}
		if ((st = cvc_db_device_put(k->db, k->run_id, &di)))
			return st;
	}
	if (k->rank_known && (st = check_rank_free(k, rank)))
		return st;
	/* A rank we numbered ourselves may be renumbered by a shard merge. */
	if (!k->rank_known &&
	    (st = cvc_db_run_meta_set(k->db, k->run_id, "import.auto_rank", "1")))
		return st;
	rk.rank = rank;
	rk.pid = k->host_pid;
	if ((st = cvc_db_rank_put(k->db, k->run_id, &rk)))
		return st;
	if (k->schema || k->cupti || k->cudart) {
		int m = snprintf(tool, sizeof tool, "kineto schema %s",
				 k->schema ? k->schema : "?");

		if (k->cupti && m > 0 && (size_t)m < sizeof tool)
			m += snprintf(tool + m, sizeof tool - (size_t)m, ", cupti %s", k->cupti);
		if (k->cudart && m > 0 && (size_t)m < sizeof tool)
			snprintf(tool + m, sizeof tool - (size_t)m, ", cuda runtime %s", k->cudart);
	}
	gpu = k->ndevs ? find_prop(k, k->devs[0]) : NULL;
	if (!gpu && k->nprops)
		gpu = &k->props[0];
	ri.format = "kineto";
	ri.source = k->path;
	ri.tool_version = tool[0] ? tool : NULL;
	ri.gpu_model = gpu ? gpu->name : NULL;
	ri.nccl_version = k->nccl_version;
	ri.world_size = (int)k->world_size;
	if ((st = cvc_db_run_merge(k->db, k->run_id, &ri)))
		return st;
	for (size_t i = 0; i < k->nmeta; i++) {
		snprintf(key, sizeof key, "rank%d.%s", rank, k->metas[i].key);
		if ((st = cvc_db_run_meta_set(k->db, k->run_id, key, k->metas[i].value)))
			return st;
	}
	return cvc_db_source_add(k->db, k->run_id, k->path, "kineto", rank, k->n.events, NULL);
}
