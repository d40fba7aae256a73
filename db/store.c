/*
 * store.c - the cvc_db handle: open/migrate, transactions, bulk writers.
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

extern const char cvc_schema_sql[];
extern const char cvc_migrate_2_sql[];
extern const char cvc_migrate_3_sql[];

/* migrations[v] takes version v to v + 1 (db/migrate_<v+1>.sql). */
static const char *const migrations[CVC_DB_SCHEMA_VERSION] = {
	[1] = cvc_migrate_2_sql,
	[2] = cvc_migrate_3_sql,
};

enum stmt_id {
	S_RUN_NEW, S_RUN_MERGE, S_RUN_FIND, S_META_SET, S_META_ADD, S_RANK_PUT,
	S_DEV_PUT, S_SRC_ADD, S_STR_FIND, S_STR_ADD, S_ACT_ADD, S_COLL_ADD,
	S_RANGE_ADD, S_NT_ADD, S_SHAPE_ADD, S_LAUNCH_ADD, S_COUNT
};

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
		      "block_x,block_y,block_z,registers,shared_mem_bytes,bytes,copy_kind) "
		      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
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

/* Open-addressing hash of interned strings: text -> id. */
struct str_slot {
	char *s;
	size_t len;
	uint64_t hash;
	int64_t id;
};

struct cvc_db {
	sqlite3 *sq;
	char *path;
	int in_txn;
	int readonly;
	sqlite3_stmt *st[S_COUNT];
	struct str_slot *slots;
	size_t nslots, nused;
	size_t cached_bytes;      /* bytes of the names in slots */
	char errmsg[1024];
};

const char *cvc_strerror(cvc_status st)
{
	switch (st) {
	case CVC_OK: return "ok";
	case CVC_ERR_NOMEM: return "out of memory";
	case CVC_ERR_IO: return "i/o error";
	case CVC_ERR_FORMAT: return "malformed input";
	case CVC_ERR_DB: return "database error";
	case CVC_ERR_USAGE: return "bad usage";
	case CVC_ERR_NOTFOUND: return "not found";
	case CVC_ERR_UNSUPPORTED: return "not supported by this build";
	case CVC_ERR_VERSION: return "incompatible database";
	case CVC_ERR_INTERNAL: return "internal error";
	}
	return "unknown status";
}

int cvc_exit_code(cvc_status st)
{
	switch (st) {
	case CVC_OK: return 0;
	case CVC_ERR_FORMAT:
	case CVC_ERR_USAGE:
	case CVC_ERR_VERSION:
	case CVC_ERR_NOTFOUND:
		return 2;
	default:
		return 1;
	}
}

cvc_status cvc_db_fail(cvc_db *db, cvc_status st, const char *fmt, ...)
{
	va_list ap;

	if (!db)
		return st;
	va_start(ap, fmt);
	vsnprintf(db->errmsg, sizeof db->errmsg, fmt, ap);
	va_end(ap);
	return st;
}

/* Records SQLite's own message for a failed call. */
static cvc_status sq_fail(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "'%s': %s: %s", db->path, what,
			   sqlite3_errmsg(db->sq));
}

const char *cvc_db_errmsg(const cvc_db *db)
{
	return db ? db->errmsg : "out of memory";
}

sqlite3 *cvc_db_sqlite(cvc_db *db)
{
	return db->sq;
}

const char *cvc_db_path(const cvc_db *db)
{
	return db->path;
}

int cvc_db_sqlite_has_table(sqlite3 *sq, const char *name)
{
	sqlite3_stmt *st = NULL;
	int found = -1;

	if (sqlite3_prepare_v2(sq,
			       "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name=?",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW: found = 1; break;
	case SQLITE_DONE: found = 0; break;
	default: break;
	}
	sqlite3_finalize(st);
	return found;
}

cvc_status cvc_db_exec(cvc_db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->sq, sql, NULL, NULL, &msg) != SQLITE_OK) {
		cvc_db_fail(db, CVC_ERR_DB, "'%s': %s", db->path,
			    msg ? msg : sqlite3_errmsg(db->sq));
		sqlite3_free(msg);
		return CVC_ERR_DB;
	}
	return CVC_OK;
}

static cvc_status pragma_int(cvc_db *db, const char *sql, int *v)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(db->sq, sql, -1, &st, NULL) != SQLITE_OK)
		return sq_fail(db, "reading header");
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_finalize(st);
		return sq_fail(db, "reading header");
	}
	*v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return CVC_OK;
}

/* Runs the migrations from version `from` to the current one. */
static cvc_status migrate(cvc_db *db, int from)
{
	cvc_status st;

	char msg[512];

	for (int v = from; v < CVC_DB_SCHEMA_VERSION; v++) {
		if (v < 1 || !migrations[v] || !(st = cvc_db_exec(db, migrations[v])))
			continue;
		snprintf(msg, sizeof msg, "%s", cvc_db_errmsg(db));
		return cvc_db_fail(db, st, "'%s': upgrading schema %d to %d: %s", db->path, v,
				   v + 1, msg);
	}
	return CVC_OK;
}

/*
 * Creates the schema on an empty file, upgrades older versions, refuses
 * foreign or newer files.  An
 * empty file is one with no tables at all, so that a random SQLite database
 * (an Nsight Systems export, say) is never written into by mistake.
 */
static cvc_status check_or_create_schema(cvc_db *db, int create)
{
	int ver = 0, app = 0, ntab = 0;
	cvc_status st;
	char sql[128];

	if ((st = pragma_int(db, "PRAGMA user_version", &ver)) ||
	    (st = pragma_int(db, "PRAGMA application_id", &app)) ||
	    (st = pragma_int(db, "SELECT count(*) FROM sqlite_schema", &ntab)))
		return st;
	if (ntab == 0 && ver == 0) {
		if (!create || db->readonly)
			return cvc_db_fail(db, CVC_ERR_VERSION,
					   "'%s': empty database, not a cvc database",
					   db->path);
		if ((st = cvc_db_exec(db, "BEGIN IMMEDIATE")))
			return st;
		snprintf(sql, sizeof sql,
			 "PRAGMA application_id=%d; PRAGMA user_version=%d;",
			 (int)CVC_DB_APP_ID, CVC_DB_SCHEMA_VERSION);
		if ((st = cvc_db_exec(db, cvc_schema_sql)) || (st = migrate(db, 1)) ||
		    (st = cvc_db_exec(db, sql))) {
			cvc_db_exec(db, "ROLLBACK");
			return st;
		}
		return cvc_db_exec(db, "COMMIT");
	}
	if ((uint32_t)app != CVC_DB_APP_ID)
		return cvc_db_fail(db, CVC_ERR_VERSION,
				   "'%s': not a cvc database (application_id 0x%08x)",
				   db->path, (unsigned)app);
	if (ver > CVC_DB_SCHEMA_VERSION)
		return cvc_db_fail(db, CVC_ERR_VERSION,
				   "'%s': schema version %d is newer than this cvc (%d)",
				   db->path, ver, CVC_DB_SCHEMA_VERSION);
	if (ver >= CVC_DB_SCHEMA_VERSION)
		return CVC_OK;
	/* Read-only: the tables a reader needs are in every version; what a
	 * later version added (op_launches) is looked up before use. */
	if (db->readonly)
		return CVC_OK;
	if (ver < 1)
		return cvc_db_fail(db, CVC_ERR_VERSION, "'%s': schema version %d is not a cvc version",
				   db->path, ver);
	/* Older database opened for writing: upgraded in one transaction, so
	 * a failure leaves it at its old version. */
	if ((st = cvc_db_exec(db, "BEGIN IMMEDIATE")))
		return st;
	/* Another process may have upgraded it while we waited for the lock. */
	if ((st = pragma_int(db, "PRAGMA user_version", &ver))) {
		cvc_db_exec(db, "ROLLBACK");
		return st;
	}
	snprintf(sql, sizeof sql, "PRAGMA user_version=%d;", CVC_DB_SCHEMA_VERSION);
	if (ver < CVC_DB_SCHEMA_VERSION &&
	    ((st = migrate(db, ver)) || (st = cvc_db_exec(db, sql)))) {
		cvc_db_exec(db, "ROLLBACK");
		return st;
	}
	return cvc_db_exec(db, "COMMIT");
}

cvc_status cvc_db_open(const char *path, int flags, cvc_db **out)
{
	cvc_db *db = NULL;
	cvc_status st = CVC_OK;
	int oflags;

	*out = NULL;
	db = calloc(1, sizeof *db);
	if (!db)
		return CVC_ERR_NOMEM;
	*out = db;
	db->path = strdup(path);
	if (!db->path) {
		st = cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
		goto out;
	}
	db->readonly = !!(flags & CVC_DB_READONLY);
	oflags = db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
	if ((flags & CVC_DB_CREATE) && !db->readonly)
		oflags |= SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(path, &db->sq, oflags, NULL) != SQLITE_OK) {
		/* A database the user named but that is not there is bad input (exit 2). */
		if (!(oflags & SQLITE_OPEN_CREATE) && access(path, F_OK) != 0) {
			st = cvc_db_fail(db, CVC_ERR_NOTFOUND,
					 "'%s': cannot open database: no such file", path);
			goto out;
		}
		st = cvc_db_fail(db, db->sq ? CVC_ERR_DB : CVC_ERR_NOMEM,
				 "'%s': cannot open database: %s", path,
				 db->sq ? sqlite3_errmsg(db->sq) : "out of memory");
		goto out;
	}
	/* A second importer waits instead of failing (issue 8: concurrency). */
	sqlite3_busy_timeout(db->sq, 30000);
	sqlite3_extended_result_codes(db->sq, 1);
	/* The file is checked before anything is written to it: switching a
	 * user's foreign SQLite file to WAL would change its header (issue 14). */
	if ((st = cvc_db_exec(db, "PRAGMA foreign_keys=ON;")) ||
	    (st = check_or_create_schema(db, !!(flags & CVC_DB_CREATE))))
		goto out;
	if (!db->readonly)
		st = cvc_db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
out:
	/* A damaged or foreign file is bad input (exit 2, issue 8), not an i/o failure. */
	if (st == CVC_ERR_DB && db->sq) {
		int ec = sqlite3_errcode(db->sq) & 0xff;

		if (ec == SQLITE_NOTADB)
			st = CVC_ERR_VERSION;
		else if (ec == SQLITE_CORRUPT)
			st = CVC_ERR_FORMAT;
	}
	return st;
}

static void str_table_free(cvc_db *db)
{
	for (size_t i = 0; i < db->nslots; i++)
		free(db->slots[i].s);
	free(db->slots);
	db->slots = NULL;
	db->nslots = db->nused = 0;
	db->cached_bytes = 0;
}

void cvc_db_remove_files(const char *path)
{
	static const char *const side[] = {"-wal", "-shm", "-journal"};
	size_t n = strlen(path);
	char *buf = malloc(n + 16);

	unlink(path);
	if (!buf)
		return;
	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
		snprintf(buf, n + 16, "%s%s", path, side[i]);
		unlink(buf);
	}
	free(buf);
}

void cvc_db_close(cvc_db *db)
{
	if (!db)
		return;
	if (db->in_txn)
		cvc_db_rollback(db);
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(db->st[i]);
	str_table_free(db);
	sqlite3_close(db->sq);
	free(db->path);
	free(db);
}

cvc_status cvc_db_begin(cvc_db *db)
{
	cvc_status st;

	assert(!db->in_txn);
	if ((st = cvc_db_exec(db, "BEGIN IMMEDIATE")))
		return st;
	db->in_txn = 1;
	return CVC_OK;
}

cvc_status cvc_db_commit(cvc_db *db)
{
	cvc_status st;

	assert(db->in_txn);
	if ((st = cvc_db_exec(db, "COMMIT")))
		return st;
	db->in_txn = 0;
	return CVC_OK;
}

/*
 * The interned-string cache may hold ids that the rollback just removed;
 * drop it so the next import re-reads the table.
 */
void cvc_db_rollback(cvc_db *db)
{
	if (!db->in_txn)
		return;
	sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
	db->in_txn = 0;
	str_table_free(db);
}

/* Returns the prepared statement id, reset and with bindings cleared. */
static sqlite3_stmt *stmt(cvc_db *db, enum stmt_id id)
{
	if (!db->st[id]) {
		if (sqlite3_prepare_v3(db->sq, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
				       &db->st[id], NULL) != SQLITE_OK) {
			sq_fail(db, "preparing statement");
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
		return sq_fail(db, what);
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
	return sq_fail(db, "finding run");
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
		return sq_fail(db, "finding string");
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
 * (importers, shard merges, the profiler's spool): times within +-2^62 ns
 * (146 years; Kineto's epoch nanoseconds are 1.7e18), end not before start,
 * a device index a GPU can have.  An export whose kernel ends at INT64_MAX
 * would otherwise import and break every later analysis (issue 14).
 */
#define TIME_LIMIT_NS ((int64_t)1 << 62)

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
				   "%s: expected start <= end within 2^62 ns, got start %lld, end %lld",
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
