/*
 * store.c - the bulk writers of the cvc_db handle (its file's life, the
 * schema and the transactions are dbfile.c's).
 *
 * Every writer uses a statement prepared once per handle and reset after
 * each row; importers call them tens of thousands of times per file inside
 * one transaction, which is what keeps an import at SQLite's insert speed.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_db.h"
#include "db_int.h"

static const char *const stmt_sql[S_COUNT] = {
	[S_RUN_NEW] = "INSERT INTO runs(name,format,source,tool_version,gpu_model,"
		      "nccl_version,world_size) VALUES(?,?,?,?,?,?,?)",
	[S_RUN_MERGE] = "UPDATE runs SET format=coalesce(format,?2),"
			"source=coalesce(source,?3),tool_version=coalesce(tool_version,?4),"
			"gpu_model=coalesce(gpu_model,?5),nccl_version=coalesce(nccl_version,?6),"
			"world_size=coalesce(world_size,?7) WHERE id=?1",
	[S_RUN_FIND] = "SELECT id FROM runs WHERE name=?",
	[S_META_SET] = "INSERT OR REPLACE INTO run_meta(run_id,key,value) VALUES(?,?,?)",
	[S_META_ADD] = "INSERT INTO run_meta(run_id,key,value) VALUES(?1,?2,?3) "
		       "ON CONFLICT(run_id,key) DO UPDATE SET "
		       "value=CAST(coalesce(value,0) AS INTEGER)+?3",
	[S_RANK_PUT] = "INSERT INTO ranks(run_id,rank,host,pid,clock_offset_ns) "
		       "VALUES(?1,?2,?3,?4,?5) ON CONFLICT(run_id,rank) DO UPDATE SET "
		       "host=coalesce(host,?3),pid=coalesce(pid,?4),"
		       "clock_offset_ns=?5",
	[S_DEV_PUT] = "INSERT INTO devices(run_id,rank,device,name,sm_count,"
		      "total_mem_bytes,cc_major,cc_minor,mem_bw_gbps,clock_khz) "
		      "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) "
		      "ON CONFLICT(run_id,rank,device) DO UPDATE SET "
		      "name=coalesce(name,?4),sm_count=coalesce(sm_count,?5),"
		      "total_mem_bytes=coalesce(total_mem_bytes,?6),"
		      "cc_major=coalesce(cc_major,?7),cc_minor=coalesce(cc_minor,?8),"
		      "mem_bw_gbps=coalesce(mem_bw_gbps,?9),clock_khz=coalesce(clock_khz,?10)",
	[S_SRC_ADD] = "INSERT INTO sources(run_id,path,format,rank,events) VALUES(?,?,?,?,?)",
	[S_STR_FIND] = "SELECT id FROM strings WHERE value=?",
	[S_STR_ADD] = "INSERT INTO strings(value) VALUES(?)",
	[S_ACT_ADD] = "INSERT INTO activities(run_id,rank,device,kind,name_id,start_ns,"
		      "end_ns,stream,context,correlation,external_id,grid_x,grid_y,grid_z,"
		      "block_x,block_y,block_z,registers,shared_mem_bytes,bytes,copy_kind,"
		      "launch_ns) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_COLL_ADD] = "INSERT OR REPLACE INTO collectives(activity_id,coll,dtype,in_nelems,"
		       "out_nelems,bytes,group_size,pg_name,pg_desc,pg_ranks,algo,proto,root) "
		       "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_RANGE_ADD] = "INSERT INTO ranges(run_id,rank,device,kind,name_id,start_ns,end_ns,"
			"tid,domain) VALUES(?,?,?,?,?,?,?,?,?)",
	[S_NT_ADD] = "INSERT INTO nccl_tests(run_id,op,nranks,size_bytes,count,dtype,redop,"
		     "root,in_place,time_us,algbw_gbps,busbw_gbps,wrong,gpus_per_node,algo) "
		     "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[S_SHAPE_ADD] = "INSERT INTO op_shapes(run_id,rank,external_id,name_id,dims,types) "
			"VALUES(?,?,?,?,?,?)",
	[S_LAUNCH_ADD] = "INSERT OR IGNORE INTO op_launches(shape_id,run_id,rank,correlation) "
			 "VALUES(?,?,?,?)",
};

void db_str_cache_free(cvc_db *db)
{
	for (size_t i = 0; i < db->nslots; i++)
		free(db->slots[i].s);
	free(db->slots);
	db->slots = NULL;
	db->nslots = db->nused = 0;
	db->cached_bytes = 0;
}

void db_stmts_finalize(cvc_db *db)
{
	for (int i = 0; i < S_COUNT; i++) {
		sqlite3_finalize(db->st[i]);
		db->st[i] = NULL;
	}
}

/* Returns the prepared statement id, reset and with bindings cleared. */
static sqlite3_stmt *stmt(cvc_db *db, enum stmt_id id)
{
	if (!db->st[id]) {
		if (sqlite3_prepare_v3(db->sq, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
				       &db->st[id], NULL) != SQLITE_OK) {
			db_sq_fail(db, "preparing statement");
			return NULL;
		}
	}
	return db->st[id];
}

/* Steps a write statement to completion and resets it. */
static cvc_status step_done(cvc_db *db, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_sq_fail(db, what);
	return CVC_OK;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Binds v, or NULL when v equals the "unknown" marker. */
static void bind_i64_or_null(sqlite3_stmt *st, int i, int64_t v, int64_t unknown)
{
	if (v == unknown)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_int64(st, i, v);
}

static void bind_run_info(sqlite3_stmt *st, const cvc_run_info *in)
{
	bind_text(st, 2, in->format);
	bind_text(st, 3, in->source);
	bind_text(st, 4, in->tool_version);
	bind_text(st, 5, in->gpu_model);
	bind_text(st, 6, in->nccl_version);
	bind_i64_or_null(st, 7, in->world_size, 0);
}

cvc_status cvc_db_run_new(cvc_db *db, const cvc_run_info *info, int64_t *run_id)
{
	sqlite3_stmt *st = stmt(db, S_RUN_NEW);
	cvc_status rc;

	if (!st)
		return CVC_ERR_DB;
	bind_text(st, 1, info->name);
	bind_run_info(st, info);
	if ((rc = step_done(db, st, "adding run")))
		return rc;
	*run_id = sqlite3_last_insert_rowid(db->sq);
	return CVC_OK;
}

cvc_status cvc_db_run_merge(cvc_db *db, int64_t run_id, const cvc_run_info *info)
{
	sqlite3_stmt *st = stmt(db, S_RUN_MERGE);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	bind_run_info(st, info);
	return step_done(db, st, "updating run");
}

cvc_status cvc_db_run_find(cvc_db *db, const char *name, int64_t *run_id)
{
	sqlite3_stmt *st = stmt(db, S_RUN_FIND);
	int rc;

	if (!st)
		return CVC_ERR_DB;
	bind_text(st, 1, name);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*run_id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW)
		return CVC_OK;
	if (rc == SQLITE_DONE)
		return cvc_db_fail(db, CVC_ERR_NOTFOUND, "'%s': no run named '%s'",
				   db->path, name);
	return db_sq_fail(db, "finding run");
}

cvc_status cvc_db_run_meta_set(cvc_db *db, int64_t run_id, const char *key,
			       const char *value)
{
	sqlite3_stmt *st = stmt(db, S_META_SET);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, key);
	bind_text(st, 3, value);
	return step_done(db, st, "setting run metadata");
}

cvc_status cvc_db_run_meta_add(cvc_db *db, int64_t run_id, const char *key, int64_t n)
{
	sqlite3_stmt *st = stmt(db, S_META_ADD);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, key);
	sqlite3_bind_int64(st, 3, n);
	return step_done(db, st, "adding to run metadata");
}

cvc_status cvc_db_rank_put(cvc_db *db, int64_t run_id, const cvc_rank_info *in)
{
	sqlite3_stmt *st = stmt(db, S_RANK_PUT);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, in->rank);
	bind_text(st, 3, in->host);
	bind_i64_or_null(st, 4, in->pid, 0);
	/* an offset added to a time must stay summable (CVC_TIME_LIMIT_NS) */
	if (in->clock_offset_ns < -CVC_TIME_LIMIT_NS || in->clock_offset_ns > CVC_TIME_LIMIT_NS) {
		sqlite3_clear_bindings(st);
		return cvc_db_fail(db, CVC_ERR_FORMAT,
				   "rank %d: expected a clock offset within +-(2^62 - 1) ns, got %lld",
				   in->rank, (long long)in->clock_offset_ns);
	}
	sqlite3_bind_int64(st, 5, in->clock_offset_ns);
	return step_done(db, st, "adding rank");
}

cvc_status cvc_db_device_put(cvc_db *db, int64_t run_id, const cvc_device_info *in)
{
	sqlite3_stmt *st = stmt(db, S_DEV_PUT);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	sqlite3_bind_int(st, 2, in->rank);
	sqlite3_bind_int(st, 3, in->device);
	bind_text(st, 4, in->name);
	bind_i64_or_null(st, 5, in->sm_count, 0);
	bind_i64_or_null(st, 6, in->total_mem_bytes, 0);
	bind_i64_or_null(st, 7, in->cc_major, -1);
	bind_i64_or_null(st, 8, in->cc_minor, -1);
	if (in->mem_bw_gbps > 0)
		sqlite3_bind_double(st, 9, in->mem_bw_gbps);
	bind_i64_or_null(st, 10, in->clock_khz, 0);
	return step_done(db, st, "adding device");
}

cvc_status cvc_db_source_add(cvc_db *db, int64_t run_id, const char *path,
			     const char *format, int rank, int64_t events,
			     int64_t *source_id)
{
	sqlite3_stmt *st = stmt(db, S_SRC_ADD);
	cvc_status rc;

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, run_id);
	bind_text(st, 2, path);
	bind_text(st, 3, format);
	bind_i64_or_null(st, 4, rank, -1);
	sqlite3_bind_int64(st, 5, events);
	if ((rc = step_done(db, st, "adding source")))
		return rc;
	if (source_id)
		*source_id = sqlite3_last_insert_rowid(db->sq);
	return CVC_OK;
}

#define STR_CACHE_ONE ((size_t)64 << 10)
#define STR_CACHE_BYTES ((size_t)64 << 20)

static cvc_status str_table_grow(cvc_db *db)
{
	size_t n = db->nslots ? db->nslots * 2 : 1024;
	struct str_slot *ns = calloc(n, sizeof *ns);

	if (!ns)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory interning strings");
	for (size_t i = 0; i < db->nslots; i++) {
		struct str_slot *o = &db->slots[i];
		size_t j;

		if (!o->s)
			continue;
		for (j = o->hash & (n - 1); ns[j].s; j = (j + 1) & (n - 1))
			;
		ns[j] = *o;
	}
	free(db->slots);
	db->slots = ns;
	db->nslots = n;
	return CVC_OK;
}

/* Looks the string up in SQLite, inserting it when absent. */
static cvc_status str_lookup_db(cvc_db *db, const char *s, size_t len, int64_t *id)
{
	sqlite3_stmt *st = stmt(db, S_STR_FIND);
	int rc;

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_text(st, 1, s, (int)len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW)
		return CVC_OK;
	if (rc != SQLITE_DONE)
		return db_sq_fail(db, "finding string");
	st = stmt(db, S_STR_ADD);
	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_text(st, 1, s, (int)len, SQLITE_STATIC);
	if ((rc = step_done(db, st, "adding string")))
		return rc;
	*id = sqlite3_last_insert_rowid(db->sq);
	return CVC_OK;
}

cvc_status cvc_db_intern(cvc_db *db, const char *s, size_t len, int64_t *id)
{
	uint64_t h;
	size_t j;
	cvc_status rc;

	if (len > CVC_DB_NAME_MAX)
		return cvc_db_fail(db, CVC_ERR_FORMAT, "name of %zu bytes is longer than %zu",
				   len, CVC_DB_NAME_MAX);
	if (db->nused * 2 >= db->nslots && (rc = str_table_grow(db)))
		return rc;
	h = cvc_hash_fnv1a(s, len);
	for (j = h & (db->nslots - 1); db->slots[j].s; j = (j + 1) & (db->nslots - 1)) {
		struct str_slot *sl = &db->slots[j];

		if (sl->hash == h && sl->len == len && memcmp(sl->s, s, len) == 0) {
			*id = sl->id;
			return CVC_OK;
		}
	}
	if ((rc = str_lookup_db(db, s, len, id)))
		return rc;
	/* The cache only saves SQL lookups: long names, and names past a
	 * budget, are looked up in the strings table each time instead of
	 * being kept for the whole import (3000 distinct 1 MiB names would
	 * otherwise hold 3 GB; issue 14) */
	if (len > STR_CACHE_ONE || db->cached_bytes + len > STR_CACHE_BYTES)
		return CVC_OK;
	db->cached_bytes += len;
	db->slots[j].s = malloc(len + 1);
	if (!db->slots[j].s)
		return cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory interning strings");
	memcpy(db->slots[j].s, s, len);
	db->slots[j].s[len] = '\0';
	db->slots[j].len = len;
	db->slots[j].hash = h;
	db->slots[j].id = *id;
	db->nused++;
	return CVC_OK;
}

/*
 * The one range check every writer of device timelines goes through
 * (importers, shard merges, the profiler's spool): times within
 * +-CVC_TIME_LIMIT_NS
 * (146 years; Kineto's epoch nanoseconds are 1.7e18), end not before start,
 * a device index a GPU can have.  An export whose kernel ends at INT64_MAX
 * would otherwise import and break every later analysis (issue 14).
 */
#define TIME_LIMIT_NS CVC_TIME_LIMIT_NS

int cvc_db_span_ok(int64_t start, int64_t end, int64_t device, int host_ok)
{
	return start >= -TIME_LIMIT_NS && end <= TIME_LIMIT_NS && end >= start &&
	       device <= 65535 && device >= (host_ok ? -1 : 0);
}

static cvc_status check_span(cvc_db *db, const char *what, int64_t start, int64_t end,
			     int device, int host_ok)
{
	if (cvc_db_span_ok(start, end, device, host_ok))
		return CVC_OK;
	if (start < -TIME_LIMIT_NS || end > TIME_LIMIT_NS || end < start)
		return cvc_db_fail(db, CVC_ERR_FORMAT,
				   "%s: expected start <= end within +-(2^62 - 1) ns, got start %lld, "
				   "end %lld",
				   what, (long long)start, (long long)end);
	return cvc_db_fail(db, CVC_ERR_FORMAT, "%s: expected a device index 0..65535, got %d",
			   what, device);
}

/* The columns activities and ranges both begin with, bound as ?1..?7. */
struct span_cols {
	int64_t run_id;
	int rank, device, kind;
	int64_t name_id, start_ns, end_ns;
};

/* Checks the span (what names the row in the message) and binds it. */
static cvc_status bind_span(cvc_db *db, sqlite3_stmt *st, const char *what, int host_ok,
			    const struct span_cols *c)
{
	cvc_status rc;

	if ((rc = check_span(db, what, c->start_ns, c->end_ns, c->device, host_ok)))
		return rc;
	sqlite3_bind_int64(st, 1, c->run_id);
	sqlite3_bind_int(st, 2, c->rank);
	sqlite3_bind_int(st, 3, c->device);
	sqlite3_bind_int(st, 4, c->kind);
	sqlite3_bind_int64(st, 5, c->name_id);
	sqlite3_bind_int64(st, 6, c->start_ns);
	sqlite3_bind_int64(st, 7, c->end_ns);
	return CVC_OK;
}

cvc_status cvc_db_activity_add(cvc_db *db, const cvc_activity *a, int64_t *id)
{
	sqlite3_stmt *st = stmt(db, S_ACT_ADD);
	cvc_status rc;

	if (!st)
		return CVC_ERR_DB;
	if ((rc = bind_span(db, st, "activity", 0,
			    &(struct span_cols){a->run_id, a->rank, a->device, (int)a->kind,
						a->name_id, a->start_ns, a->end_ns})))
		return rc;
	bind_i64_or_null(st, 8, a->stream, -1);
	bind_i64_or_null(st, 9, a->context, -1);
	bind_i64_or_null(st, 10, a->correlation, -1);
	bind_i64_or_null(st, 11, a->external_id, -1);
	for (int i = 0; i < 3; i++) {
		bind_i64_or_null(st, 12 + i, a->grid[i], 0);
		bind_i64_or_null(st, 15 + i, a->block[i], 0);
	}
	bind_i64_or_null(st, 18, a->registers, 0);
	bind_i64_or_null(st, 19, a->shared_mem_bytes, 0);
	bind_i64_or_null(st, 20, a->kind == CVC_ACT_KERNEL ? 0 : a->bytes, 0);
	bind_i64_or_null(st, 21, a->copy_kind, 0);
	if (a->has_launch) {
		if (a->launch_ns < -CVC_TIME_LIMIT_NS || a->launch_ns > CVC_TIME_LIMIT_NS)
			return cvc_db_fail(db, CVC_ERR_FORMAT,
					   "activity: launch time %lld ns is out of range",
					   (long long)a->launch_ns);
		sqlite3_bind_int64(st, 22, a->launch_ns);
	} else {
		sqlite3_bind_null(st, 22);
	}
	if ((rc = step_done(db, st, "adding activity")))
		return rc;
	if (id)
		*id = sqlite3_last_insert_rowid(db->sq);
	return CVC_OK;
}

cvc_status cvc_db_collective_add(cvc_db *db, const cvc_collective *c)
{
	sqlite3_stmt *st = stmt(db, S_COLL_ADD);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, c->activity_id);
	bind_text(st, 2, c->coll);
	bind_text(st, 3, c->dtype);
	bind_i64_or_null(st, 4, c->in_nelems, -1);
	bind_i64_or_null(st, 5, c->out_nelems, -1);
	bind_i64_or_null(st, 6, c->bytes, -1);
	bind_i64_or_null(st, 7, c->group_size, 0);
	bind_text(st, 8, c->pg_name);
	bind_text(st, 9, c->pg_desc);
	bind_text(st, 10, c->pg_ranks);
	bind_text(st, 11, c->algo);
	bind_text(st, 12, c->proto);
	bind_i64_or_null(st, 13, c->root, -1);
	return step_done(db, st, "adding collective");
}

cvc_status cvc_db_range_add(cvc_db *db, const cvc_range *r)
{
	sqlite3_stmt *st = stmt(db, S_RANGE_ADD);
	cvc_status rc;

	if (!st)
		return CVC_ERR_DB;
	if ((rc = bind_span(db, st, "range", 1,
			    &(struct span_cols){r->run_id, r->rank, r->device, (int)r->kind,
						r->name_id, r->start_ns, r->end_ns})))
		return rc;
	bind_i64_or_null(st, 8, r->tid, -1);
	bind_text(st, 9, r->domain);
	return step_done(db, st, "adding range");
}

cvc_status cvc_db_nccltest_add(cvc_db *db, const cvc_nccltest_row *r)
{
	sqlite3_stmt *st = stmt(db, S_NT_ADD);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, r->run_id);
	bind_text(st, 2, r->op);
	bind_i64_or_null(st, 3, r->nranks, 0);
	sqlite3_bind_int64(st, 4, r->size_bytes);
	sqlite3_bind_int64(st, 5, r->count);
	bind_text(st, 6, r->dtype);
	bind_text(st, 7, r->redop);
	sqlite3_bind_int(st, 8, r->root);
	sqlite3_bind_int(st, 9, r->in_place);
	sqlite3_bind_double(st, 10, r->time_us);
	sqlite3_bind_double(st, 11, r->algbw_gbps);
	sqlite3_bind_double(st, 12, r->busbw_gbps);
	bind_i64_or_null(st, 13, r->wrong, -1);
	bind_i64_or_null(st, 14, r->gpus_per_node, 0);
	bind_text(st, 15, r->algo && r->algo[0] ? r->algo : NULL);
	return step_done(db, st, "adding nccl-tests row");
}

cvc_status cvc_db_op_shape_add(cvc_db *db, const cvc_op_shape *s, int64_t *id)
{
	cvc_status rc;
	sqlite3_stmt *st = stmt(db, S_SHAPE_ADD);

	if (!st)
		return CVC_ERR_DB;
	if (!s->dims || s->dims_len > INT32_MAX || s->types_len > INT32_MAX)
		return cvc_db_fail(db, CVC_ERR_USAGE, "adding op shape: no dims or text too long");
	sqlite3_bind_int64(st, 1, s->run_id);
	sqlite3_bind_int(st, 2, s->rank);
	sqlite3_bind_int64(st, 3, s->external_id);
	sqlite3_bind_int64(st, 4, s->name_id);
	sqlite3_bind_text(st, 5, s->dims, (int)s->dims_len, SQLITE_TRANSIENT);
	if (s->types)
		sqlite3_bind_text(st, 6, s->types, (int)s->types_len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 6);
	if ((rc = step_done(db, st, "adding op shape")))
		return rc;
	if (id)
		*id = sqlite3_last_insert_rowid(db->sq);
	return CVC_OK;
}

cvc_status cvc_db_op_launch_add(cvc_db *db, int64_t shape_id, int64_t run_id, int rank,
				int64_t correlation)
{
	sqlite3_stmt *st = stmt(db, S_LAUNCH_ADD);

	if (!st)
		return CVC_ERR_DB;
	sqlite3_bind_int64(st, 1, shape_id);
	sqlite3_bind_int64(st, 2, run_id);
	sqlite3_bind_int(st, 3, rank);
	sqlite3_bind_int64(st, 4, correlation);
	return step_done(db, st, "adding op launch");
}
