/*
 * cvcdb.c - merging a cvc database (a shard written per node, or by a
 * worker of `cvc import -j N`) into one run of another.
 *
 * Why a second connection and not ATTACH + INSERT ... SELECT: the merge runs
 * inside the caller's write transaction, and SQLite refuses to DETACH a
 * database that was read inside an open transaction ("database is locked").
 * The shard would stay attached until the caller commits, and a connection
 * holds at most 10 attached files, so `-j` over more files would fail.  The
 * shard is instead read with streaming SELECTs on its own read-only
 * connection and written through the ordinary cvc_db.h writers, which remap
 * string ids by value (the interning hash), activity ids (a collective is
 * read on the same row as its activity and written right after it) and,
 * where the importer numbered them itself, ranks.  The tables copied row by
 * row (devices, sources, activities with their collectives, ranges,
 * nccl-tests rows, op shapes with their launches) go through one routine,
 * merge_table(), driven by a description of each: its SELECT, where each
 * column lands in the writer's struct, and the writer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "cvc/cvc_import.h"
#include "cvc/cvc_out.h"
#include "import_int.h"

#define CDB_MAX_RANKS (1 << 20)

struct rank_map {
	int from, to;
};

struct merge {
	cvc_db *db;
	int64_t run_id;         /* target run */
	const char *path;
	sqlite3 *src;
	char target_name[256];
	struct rank_map *map;
	size_t nmap;
	cvc_import_stats n;     /* what this shard added (n.files stays 0) */
	int ver;                /* the source's schema version */
};

static cvc_status src_fail(struct merge *m)
{
	return cvc_db_fail(m->db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable database: %s",
			   m->path, sqlite3_errmsg(m->src));
}

static cvc_status dst_fail(struct merge *m, const char *what)
{
	sqlite3 *sq = cvc_db_sqlite(m->db);

	return cvc_db_fail(m->db, CVC_ERR_DB, "'%s': %s: %s", cvc_db_path(m->db), what,
			   sqlite3_errmsg(sq));
}

static cvc_status prep(struct merge *m, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(m->src, sql, -1, st, NULL) != SQLITE_OK)
		return src_fail(m);
	return CVC_OK;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Integer column, or `unknown` when NULL (the writers' "unknown" markers). */
static int64_t col_i64(sqlite3_stmt *st, int i, int64_t unknown)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? unknown : sqlite3_column_int64(st, i);
}

static int map_cmp(const void *a, const void *b)
{
	const struct rank_map *x = a, *y = b;

	return (x->from > y->from) - (x->from < y->from);
}

static int map_rank(const struct merge *m, int r)
{
	struct rank_map key = {.from = r}, *p;

	if (m->nmap == 0) /* no map to search, which bsearch() may not be handed */
		return r;
	p = bsearch(&key, m->map, m->nmap, sizeof *m->map, map_cmp);
	return p ? p->to : r;
}

/* True when the target run already has rank r (a row, or data under it). */
static cvc_status target_has_rank(struct merge *m, int r, int *has)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(cvc_db_sqlite(m->db),
			       "SELECT 1 FROM ranks WHERE run_id=?1 AND rank=?2 UNION ALL "
			       "SELECT 1 FROM activities WHERE run_id=?1 AND rank=?2 LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return dst_fail(m, "checking ranks");
	sqlite3_bind_int64(st, 1, m->run_id);
	sqlite3_bind_int(st, 2, r);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return dst_fail(m, "checking ranks");
	*has = rc == SQLITE_ROW;
	return CVC_OK;
}

/* How a shard's rank was named (run_meta written by the profiler). */
struct rank_src {
	int auto_rank;  /* import.auto_rank: numbered by the importer */
	int from_env;   /* rank.from_env: only the launcher's environment */
	int nccl;       /* rank.nccl: NCCL's rank in the largest communicator; -1 */
	int multi;      /* the shard holds more than one rank */
};

/*
 * Ranks of one shard run.  Ranks the importer numbered itself (files that
 * do not name their rank; run_meta import.auto_rank) are renumbered to the
 * target's next free ranks, exactly as a sequential import would have
 * numbered them.  A one-rank profile whose process NCCL gave a rank takes
 * that rank (the environment can be inherited; NCCL's cannot).  A rank
 * only from the environment that is taken already (a compile or autotune
 * child that inherited RANK) is renumbered and counted in run_meta
 * import.ranks_renumbered.  Other ranks named by the trace must not collide.
 */
static cvc_status merge_ranks(struct merge *m, int64_t src_run, const struct rank_src *rs)
{
	sqlite3_stmt *st = NULL, *info = NULL;
	size_t cap = 0;
	cvc_status ret;
	int rc;

	m->nmap = 0;
	if ((ret = prep(m,
			"SELECT rank FROM ranks WHERE run_id=?1 UNION "
			"SELECT rank FROM devices WHERE run_id=?1 UNION "
			"SELECT rank FROM activities WHERE run_id=?1 UNION "
			"SELECT rank FROM ranges WHERE run_id=?1 UNION "
			"SELECT rank FROM sources WHERE run_id=?1 AND rank IS NOT NULL "
			"ORDER BY 1",
			&st)) ||
	    (ret = prep(m, "SELECT host, pid, clock_offset_ns FROM ranks WHERE run_id=? AND rank=?",
			&info)))
		goto out;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_rank_info ri = {0};
		int r = sqlite3_column_int(st, 0), irc;
		int auto_rank = rs->auto_rank;

		if (m->nmap == CDB_MAX_RANKS) {
			ret = cvc_db_fail(m->db, CVC_ERR_FORMAT, "'%s': more than %d ranks",
					  m->path, CDB_MAX_RANKS);
			goto out;
		}
		if (cvc_grow_bounded(&m->map, &cap, m->nmap + 1, sizeof *m->map, CDB_MAX_RANKS)) {
			ret = cvc_db_fail(m->db, CVC_ERR_NOMEM, "out of memory");
			goto out;
		}
		ri.rank = r;
		if (r >= 0 && rs->nccl >= 0 && m->nmap == 0 && !rs->multi) {
			ri.rank = rs->nccl;
			auto_rank = 0;
		}
		if (r >= 0 && !auto_rank) {
			int has = 0;

			if ((ret = target_has_rank(m, ri.rank, &has)))
				goto out;
			if (has && rs->from_env && rs->nccl < 0) {
				/* only the environment named it: yields to the one there */
				auto_rank = 1;
				if ((ret = cvc_db_run_meta_add(m->db, m->run_id,
							       "import.ranks_renumbered", 1)))
					goto out;
			} else if (has) {
				ret = cvc_db_fail(m->db, CVC_ERR_FORMAT,
						  "'%s': rank %d%s is already in run '%s'", m->path,
						  ri.rank, ri.rank != r ? " (NCCL's)" : "",
						  m->target_name);
				goto out;
			}
		}
		if (r >= 0 && auto_rank && (ret = imp_next_free_rank(m->db, m->run_id, &ri.rank)))
			goto out;
		m->map[m->nmap].from = r;
		m->map[m->nmap].to = ri.rank;
		m->nmap++;
		sqlite3_reset(info);
		sqlite3_bind_int64(info, 1, src_run);
		sqlite3_bind_int(info, 2, r);
		irc = sqlite3_step(info);
		if (irc == SQLITE_ROW) {
			ri.host = col_text(info, 0);
			ri.pid = col_i64(info, 1, 0);
			ri.clock_offset_ns = col_i64(info, 2, 0);
		} else if (irc != SQLITE_DONE) {
			ret = src_fail(m);
			goto out;
		}
		/* Also reserves the number, so the next free rank moves on. */
		if ((ret = cvc_db_rank_put(m->db, m->run_id, &ri)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(info);
	return ret;
}

/* ---- rows copied as they are: one routine, a table per merged table ---------- */

/* What a source row becomes in its writer's struct (col.as). */
enum col_as {
	AS_INT,         /* int or an enum of int size: NULL reads as col.unknown */
	AS_I32,         /* int32_t: NULL reads as col.unknown */
	AS_I64,         /* int64_t: NULL reads as col.unknown */
	AS_F64,         /* double: NULL reads as 0 */
	AS_TEXT,        /* const char *, borrowed from the statement: NULL stays NULL */
	AS_RANK,        /* int: the shard's rank as numbered in the target */
	AS_RANK_OPT,    /* the same, NULL reads as -1 (no rank) */
	AS_WRITER,      /* read by the table's writer (a name to intern, an old id) */
};

/* Where the SELECT's column (its place in the table) lands. */
struct col {
	enum col_as as;
	size_t off;       /* offsetof() in the writer's struct */
	int64_t unknown;
};

#define COL(as, type, field, unknown) {as, offsetof(type, field), unknown}

_Static_assert(sizeof(cvc_act_kind) == sizeof(int) && sizeof(cvc_range_kind) == sizeof(int),
	       "AS_INT stores enums as int");

/* cvc_db_source_add()'s arguments as a row. */
struct source_row {
	const char *path, *format;
	int rank;
	int64_t events;
};

/* The writers' structs, one of which a row of a merged table fills. */
union merged_row {
	cvc_device_info dev;
	struct source_row src;
	cvc_activity act;
	cvc_collective coll;
	cvc_range range;
	cvc_nccltest_row nt;
	cvc_op_shape shape;
};

struct merged {
	const char *sql;        /* the run's rows (?1 the shard's run id) in id order */
	const char *sql_old;    /* the same for shards older than schema new_in, */
	int new_in;             /* which added columns sql reads (NULL in sql_old) */
	const struct col *cols; /* cols[i]: column i of the SELECT */
	size_t ncols;
	int counts_rows;        /* adds to the rows read (stats->events) */
	/* Writes the row read from st (ctx: the caller's); counts what it wrote. */
	cvc_status (*write)(struct merge *m, sqlite3_stmt *st, union merged_row *row, void *ctx);
};

/* Columns first..first+n of st into the struct at row, as cols say. */
static void read_cols(const struct merge *m, sqlite3_stmt *st, int first, const struct col *cols,
		      size_t n, void *row)
{
	for (size_t i = 0; i < n; i++) {
		int c = first + (int)i;
		char *p = (char *)row + cols[i].off;

		switch (cols[i].as) {
		case AS_INT:
			*(int *)p = (int)col_i64(st, c, cols[i].unknown);
			break;
		case AS_I32:
			*(int32_t *)p = (int32_t)col_i64(st, c, cols[i].unknown);
			break;
		case AS_I64:
			*(int64_t *)p = col_i64(st, c, cols[i].unknown);
			break;
		case AS_F64:
			*(double *)p = sqlite3_column_double(st, c);
			break;
		case AS_TEXT:
			*(const char **)p = col_text(st, c);
			break;
		case AS_RANK:
			*(int *)p = map_rank(m, sqlite3_column_int(st, c));
			break;
		case AS_RANK_OPT:
			*(int *)p = sqlite3_column_type(st, c) == SQLITE_NULL
					    ? -1 : map_rank(m, sqlite3_column_int(st, c));
			break;
		case AS_WRITER:
			break;
		}
	}
}

/* Copies every row of table t for the shard's run src_run. */
static cvc_status merge_table(struct merge *m, int64_t src_run, const struct merged *t,
			      void *ctx)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	if ((ret = prep(m, t->sql_old && m->ver < t->new_in ? t->sql_old : t->sql, &st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		union merged_row row;

		memset(&row, 0, sizeof row);
		if (t->counts_rows)
			m->n.events++;
		read_cols(m, st, 0, t->cols, t->ncols, &row);
		if ((ret = t->write(m, st, &row, ctx)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	return ret;
}

/* A row whose name id the shard's strings table lacks (what: the row's
 * kind in the message, more: what else it lacks). */
static cvc_status no_name(struct merge *m, const char *what, const char *more)
{
	return cvc_db_fail(m->db, CVC_ERR_FORMAT, "'%s': %s %lld: name id not in table strings%s",
			   m->path, what, (long long)m->n.events, more);
}

/* Text column i of st interned in the target. */
static cvc_status intern_col(struct merge *m, sqlite3_stmt *st, int i, int64_t *id)
{
	return cvc_db_intern(m->db, col_text(st, i), (size_t)sqlite3_column_bytes(st, i), id);
}

static cvc_status write_device(struct merge *m, sqlite3_stmt *st, union merged_row *row,
			       void *ctx)
{
	(void)st, (void)ctx;
	return cvc_db_device_put(m->db, m->run_id, &row->dev);
}

static const struct col device_cols[] = {
	COL(AS_RANK, cvc_device_info, rank, 0),
	COL(AS_INT, cvc_device_info, device, 0),
	COL(AS_TEXT, cvc_device_info, name, 0),
	COL(AS_INT, cvc_device_info, sm_count, 0),
	COL(AS_I64, cvc_device_info, total_mem_bytes, 0),
	COL(AS_INT, cvc_device_info, cc_major, -1),
	COL(AS_INT, cvc_device_info, cc_minor, -1),
	COL(AS_F64, cvc_device_info, mem_bw_gbps, 0),
	COL(AS_I64, cvc_device_info, clock_khz, 0),
};

static const struct merged devices = {
	"SELECT rank, device, name, sm_count, total_mem_bytes, cc_major, "
	"cc_minor, mem_bw_gbps, clock_khz FROM devices WHERE run_id=?",
	NULL, 0, device_cols, sizeof device_cols / sizeof device_cols[0], 0, write_device,
};

static cvc_status write_source(struct merge *m, sqlite3_stmt *st, union merged_row *row,
			       void *ctx)
{
	const struct source_row *r = &row->src;

	(void)st, (void)ctx;
	return cvc_db_source_add(m->db, m->run_id, r->path ? r->path : "",
				 r->format ? r->format : "unknown", r->rank, r->events, NULL);
}

static const struct col source_cols[] = {
	COL(AS_TEXT, struct source_row, path, 0),
	COL(AS_TEXT, struct source_row, format, 0),
	COL(AS_RANK_OPT, struct source_row, rank, 0),
	COL(AS_I64, struct source_row, events, 0),
};

static const struct merged sources = {
	"SELECT path, format, rank, events FROM sources WHERE run_id=? ORDER BY id",
	NULL, 0, source_cols, sizeof source_cols / sizeof source_cols[0], 0, write_source,
};

/* Column 20 of the activities SELECT: the launch time (NULL: unknown). */
#define ACT_LAUNCH_COL 20
/* Columns 21.. of the activities SELECT: the collective, if any. */
#define ACT_COLL_COL 21

static const struct col coll_cols[] = {
	COL(AS_TEXT, cvc_collective, coll, 0),
	COL(AS_TEXT, cvc_collective, dtype, 0),
	COL(AS_I64, cvc_collective, in_nelems, -1),
	COL(AS_I64, cvc_collective, out_nelems, -1),
	COL(AS_I64, cvc_collective, bytes, -1),
	COL(AS_INT, cvc_collective, group_size, 0),
	COL(AS_TEXT, cvc_collective, pg_name, 0),
	COL(AS_TEXT, cvc_collective, pg_desc, 0),
	COL(AS_TEXT, cvc_collective, pg_ranks, 0),
	COL(AS_TEXT, cvc_collective, algo, 0),
	COL(AS_TEXT, cvc_collective, proto, 0),
	COL(AS_INT, cvc_collective, root, -1),
};

/* An activity, and right after it its collective under the new id. */
static cvc_status write_activity(struct merge *m, sqlite3_stmt *st, union merged_row *row,
				 void *ctx)
{
	cvc_activity *a = &row->act;
	int64_t id;
	cvc_status ret;

	(void)ctx;
	a->run_id = m->run_id;
	a->has_launch = sqlite3_column_type(st, ACT_LAUNCH_COL) != SQLITE_NULL;
	a->launch_ns = a->has_launch ? sqlite3_column_int64(st, ACT_LAUNCH_COL) : 0;
	if (!col_text(st, 3))
		return no_name(m, "activity", "");
	if ((ret = intern_col(m, st, 3, &a->name_id)) ||
	    (ret = cvc_db_activity_add(m->db, a, &id))) {
		if (ret == CVC_ERR_FORMAT) {
			char why[512];

			snprintf(why, sizeof why, "%s", cvc_db_errmsg(m->db));
			ret = cvc_db_fail(m->db, ret, "'%s': activity %lld: %s", m->path,
					  (long long)m->n.activities + 1, why);
		}
		return ret;
	}
	m->n.activities++;
	if (sqlite3_column_type(st, ACT_COLL_COL) != SQLITE_NULL) {
		cvc_collective c = {.activity_id = id};

		read_cols(m, st, ACT_COLL_COL + 1, coll_cols, sizeof coll_cols / sizeof coll_cols[0],
			  &c);
		if ((ret = cvc_db_collective_add(m->db, &c)))
			return ret;
		m->n.collectives++;
	}
	return CVC_OK;
}

static const struct col activity_cols[] = {
	COL(AS_RANK, cvc_activity, rank, 0),
	COL(AS_INT, cvc_activity, device, 0),
	COL(AS_INT, cvc_activity, kind, 0),
	{AS_WRITER, 0, 0}, /* the name */
	COL(AS_I64, cvc_activity, start_ns, 0),
	COL(AS_I64, cvc_activity, end_ns, 0),
	COL(AS_I64, cvc_activity, stream, -1),
	COL(AS_I64, cvc_activity, context, -1),
	COL(AS_I64, cvc_activity, correlation, -1),
	COL(AS_I64, cvc_activity, external_id, -1),
	COL(AS_I32, cvc_activity, grid[0], 0),
	COL(AS_I32, cvc_activity, grid[1], 0),
	COL(AS_I32, cvc_activity, grid[2], 0),
	COL(AS_I32, cvc_activity, block[0], 0),
	COL(AS_I32, cvc_activity, block[1], 0),
	COL(AS_I32, cvc_activity, block[2], 0),
	COL(AS_I32, cvc_activity, registers, 0),
	COL(AS_I64, cvc_activity, shared_mem_bytes, 0),
	COL(AS_I64, cvc_activity, bytes, 0),
	COL(AS_I32, cvc_activity, copy_kind, 0),
	{AS_WRITER, 0, 0}, /* launch_ns, with has_launch */
};

/* One pass, in id order: a collective follows its activity's new id. */
/* schema 4 added launch_ns */
static const struct merged activities = {
	"SELECT a.rank, a.device, a.kind, s.value, a.start_ns, a.end_ns, "
	"a.stream, a.context, a.correlation, a.external_id, a.grid_x, a.grid_y, "
	"a.grid_z, a.block_x, a.block_y, a.block_z, a.registers, "
	"a.shared_mem_bytes, a.bytes, a.copy_kind, a.launch_ns, "
	"c.activity_id, c.coll, c.dtype, c.in_nelems, c.out_nelems, c.bytes, "
	"c.group_size, c.pg_name, c.pg_desc, c.pg_ranks, c.algo, c.proto, c.root "
	"FROM activities a LEFT JOIN strings s ON s.id=a.name_id "
	"LEFT JOIN collectives c ON c.activity_id=a.id "
	"WHERE a.run_id=? ORDER BY a.id",
	"SELECT a.rank, a.device, a.kind, s.value, a.start_ns, a.end_ns, "
	"a.stream, a.context, a.correlation, a.external_id, a.grid_x, a.grid_y, "
	"a.grid_z, a.block_x, a.block_y, a.block_z, a.registers, "
	"a.shared_mem_bytes, a.bytes, a.copy_kind, NULL, "
	"c.activity_id, c.coll, c.dtype, c.in_nelems, c.out_nelems, c.bytes, "
	"c.group_size, c.pg_name, c.pg_desc, c.pg_ranks, c.algo, c.proto, c.root "
	"FROM activities a LEFT JOIN strings s ON s.id=a.name_id "
	"LEFT JOIN collectives c ON c.activity_id=a.id "
	"WHERE a.run_id=? ORDER BY a.id",
	4, activity_cols, sizeof activity_cols / sizeof activity_cols[0], 1, write_activity,
};

static cvc_status write_range(struct merge *m, sqlite3_stmt *st, union merged_row *row,
			      void *ctx)
{
	cvc_status ret;

	(void)ctx;
	row->range.run_id = m->run_id;
	if (!col_text(st, 3))
		return no_name(m, "range", "");
	if ((ret = intern_col(m, st, 3, &row->range.name_id)) ||
	    (ret = cvc_db_range_add(m->db, &row->range)))
		return ret;
	m->n.ranges++;
	return CVC_OK;
}

static const struct col range_cols[] = {
	COL(AS_RANK, cvc_range, rank, 0),
	COL(AS_INT, cvc_range, device, 0),
	COL(AS_INT, cvc_range, kind, 0),
	{AS_WRITER, 0, 0}, /* the name */
	COL(AS_I64, cvc_range, start_ns, 0),
	COL(AS_I64, cvc_range, end_ns, 0),
	COL(AS_I64, cvc_range, tid, -1),
	COL(AS_TEXT, cvc_range, domain, 0),
};

static const struct merged ranges = {
	"SELECT r.rank, r.device, r.kind, s.value, r.start_ns, r.end_ns, r.tid, "
	"r.domain FROM ranges r LEFT JOIN strings s ON s.id=r.name_id "
	"WHERE r.run_id=? ORDER BY r.id",
	NULL, 0, range_cols, sizeof range_cols / sizeof range_cols[0], 1, write_range,
};

static cvc_status write_nccltest(struct merge *m, sqlite3_stmt *st, union merged_row *row,
				 void *ctx)
{
	cvc_status ret;

	(void)st, (void)ctx;
	row->nt.run_id = m->run_id;
	if (!row->nt.op)
		row->nt.op = "unknown";
	if ((ret = cvc_db_nccltest_add(m->db, &row->nt)))
		return ret;
	m->n.nccl_rows++;
	return CVC_OK;
}

static const struct col nccltest_cols[] = {
	COL(AS_TEXT, cvc_nccltest_row, op, 0),
	COL(AS_INT, cvc_nccltest_row, nranks, 0),
	COL(AS_I64, cvc_nccltest_row, size_bytes, 0),
	COL(AS_I64, cvc_nccltest_row, count, 0),
	COL(AS_TEXT, cvc_nccltest_row, dtype, 0),
	COL(AS_TEXT, cvc_nccltest_row, redop, 0),
	COL(AS_INT, cvc_nccltest_row, root, -1),
	COL(AS_INT, cvc_nccltest_row, in_place, 0),
	COL(AS_F64, cvc_nccltest_row, time_us, 0),
	COL(AS_F64, cvc_nccltest_row, algbw_gbps, 0),
	COL(AS_F64, cvc_nccltest_row, busbw_gbps, 0),
	COL(AS_I64, cvc_nccltest_row, wrong, -1),
	COL(AS_INT, cvc_nccltest_row, gpus_per_node, 0),
	COL(AS_TEXT, cvc_nccltest_row, algo, 0),
};

/* schema 3 added gpus_per_node and algo */
static const struct merged nccl_tests = {
	"SELECT op, nranks, size_bytes, count, dtype, redop, root, in_place, "
	"time_us, algbw_gbps, busbw_gbps, wrong, gpus_per_node, algo "
	"FROM nccl_tests WHERE run_id=? ORDER BY id",
	"SELECT op, nranks, size_bytes, count, dtype, redop, root, in_place, "
	"time_us, algbw_gbps, busbw_gbps, wrong, NULL, NULL "
	"FROM nccl_tests WHERE run_id=? ORDER BY id",
	3, nccltest_cols, sizeof nccltest_cols / sizeof nccltest_cols[0], 1, write_nccltest,
};

/* The op's launches (op_launches) under its new id. */
static cvc_status merge_launches(struct merge *m, sqlite3_stmt *q, int64_t old_id,
				 int64_t new_id, int rank)
{
	int rc;
	cvc_status ret = CVC_OK;

	sqlite3_reset(q);
	sqlite3_bind_int64(q, 1, old_id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if ((ret = cvc_db_op_launch_add(m->db, new_id, m->run_id, rank,
						sqlite3_column_int64(q, 0))))
			return ret;
		m->n.op_launches++;
	}
	return rc == SQLITE_DONE ? CVC_OK : src_fail(m);
}

/* An op shape, then its launches (ctx: the op_launches query, or NULL). */
static cvc_status write_op_shape(struct merge *m, sqlite3_stmt *st, union merged_row *row,
				 void *ctx)
{
	cvc_op_shape *r = &row->shape;
	int64_t new_id;
	cvc_status ret;

	r->run_id = m->run_id;
	if (!col_text(st, 2) || !r->dims)
		return no_name(m, "op shape", " or no dims");
	r->dims_len = (size_t)sqlite3_column_bytes(st, 3);
	r->types_len = r->types ? (size_t)sqlite3_column_bytes(st, 4) : 0;
	if ((ret = intern_col(m, st, 2, &r->name_id)) ||
	    (ret = cvc_db_op_shape_add(m->db, r, &new_id)))
		return ret;
	m->n.op_shapes++;
	if (ctx && (ret = merge_launches(m, ctx, sqlite3_column_int64(st, 5), new_id, r->rank)))
		return ret;
	return CVC_OK;
}

static const struct col op_shape_cols[] = {
	COL(AS_RANK, cvc_op_shape, rank, 0),
	COL(AS_I64, cvc_op_shape, external_id, 0),
	{AS_WRITER, 0, 0}, /* the name */
	COL(AS_TEXT, cvc_op_shape, dims, 0),
	COL(AS_TEXT, cvc_op_shape, types, 0),
	{AS_WRITER, 0, 0}, /* the shard's id, for its launches */
};

static const struct merged op_shapes = {
	"SELECT o.rank, o.external_id, s.value, o.dims, o.types, o.id "
	"FROM op_shapes o LEFT JOIN strings s ON s.id=o.name_id "
	"WHERE o.run_id=? ORDER BY o.id",
	NULL, 0, op_shape_cols, sizeof op_shape_cols / sizeof op_shape_cols[0], 1, write_op_shape,
};

/* op_shapes rows (GEMM-like ops with their Input Dims) and their
 * op_launches; a shard written before a table existed has none to give. */
static cvc_status merge_op_shapes(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *lq = NULL;
	cvc_status ret;
	int has;

	if ((has = cvc_db_sqlite_has_table(m->src, "op_shapes")) < 0)
		return src_fail(m);
	if (!has)
		return CVC_OK;
	if ((has = cvc_db_sqlite_has_table(m->src, "op_launches")) < 0)
		return src_fail(m);
	if (has && (ret = prep(m, "SELECT correlation FROM op_launches WHERE shape_id=?", &lq)))
		return ret;
	ret = merge_table(m, src_run, &op_shapes, lq);
	sqlite3_finalize(lq);
	return ret;
}


static int is_integer(const char *s, int64_t *v)
{
	char *end;

	if (!s || !*s)
		return 0;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && !*end;
}

/*
 * run_meta: a key the target lacks is copied; integer counters present on
 * both sides add up (lost records of two nodes); other values keep the
 * target's, as cvc_db_run_merge keeps known run fields.
 */
static cvc_status merge_meta(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL, *cur = NULL;
	cvc_status ret;
	int rc;

	if ((ret = prep(m, "SELECT key, value FROM run_meta WHERE run_id=? ORDER BY key", &st)))
		return ret;
	if (sqlite3_prepare_v2(cvc_db_sqlite(m->db),
			       "SELECT value FROM run_meta WHERE run_id=? AND key=?", -1, &cur,
			       NULL) != SQLITE_OK) {
		ret = dst_fail(m, "reading run metadata");
		goto out;
	}
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = col_text(st, 0), *val = col_text(st, 1);
		int64_t a, b;
		int crc;

		/* one process's rank evidence, used by merge_ranks(): summing it
		 * over ranks would mean nothing */
		if (!key || strncmp(key, "rank.", 5) == 0)
			continue;
		sqlite3_reset(cur);
		sqlite3_bind_int64(cur, 1, m->run_id);
		sqlite3_bind_text(cur, 2, key, -1, SQLITE_TRANSIENT);
		crc = sqlite3_step(cur);
		if (crc == SQLITE_DONE) {
			ret = cvc_db_run_meta_set(m->db, m->run_id, key, val);
		} else if (crc == SQLITE_ROW) {
			if (is_integer(col_text(cur, 0), &a) && is_integer(val, &b)) {
				sqlite3_reset(cur);
				ret = cvc_db_run_meta_add(m->db, m->run_id, key, b);
			}
		} else {
			ret = dst_fail(m, "reading run metadata");
		}
		if (ret)
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(cur);
	return ret;
}

static cvc_status merge_run(struct merge *m, int64_t src_run, sqlite3_stmt *run)
{
	cvc_run_info ri = {
		.format = col_text(run, 1),
		.source = col_text(run, 2),
		.tool_version = col_text(run, 3),
		.gpu_model = col_text(run, 4),
		.nccl_version = col_text(run, 5),
		.world_size = (int)col_i64(run, 6, 0),
	};
	sqlite3_stmt *st = NULL;
	struct rank_src rs = {.nccl = -1};
	int rc;
	cvc_status ret;

	if ((ret = cvc_db_run_merge(m->db, m->run_id, &ri)))
		return ret;
	if ((ret = prep(m, "SELECT key, value FROM run_meta WHERE run_id=?1 AND key IN "
			"('import.auto_rank', 'rank.from_env', 'rank.nccl') UNION ALL "
			"SELECT 'ranks', count(*) FROM ranks WHERE run_id=?1", &st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = col_text(st, 0), *v = col_text(st, 1);
		int64_t x = 0;

		if (!k || !v || !is_integer(v, &x))
			continue;
		if (strcmp(k, "import.auto_rank") == 0)
			rs.auto_rank = x != 0;
		else if (strcmp(k, "rank.from_env") == 0)
			rs.from_env = x != 0;
		else if (strcmp(k, "rank.nccl") == 0 && x >= 0 && x < (1 << 30))
			rs.nccl = (int)x;
		else if (strcmp(k, "ranks") == 0)
			rs.multi = x > 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return src_fail(m);
	if ((ret = merge_ranks(m, src_run, &rs)) || (ret = merge_table(m, src_run, &devices, NULL)) ||
	    (ret = merge_meta(m, src_run)) || (ret = merge_table(m, src_run, &sources, NULL)) ||
	    (ret = merge_table(m, src_run, &activities, NULL)) ||
	    (ret = merge_table(m, src_run, &ranges, NULL)) ||
	    (ret = merge_table(m, src_run, &nccl_tests, NULL)) || (ret = merge_op_shapes(m, src_run)))
		return ret;
	return CVC_OK;
}

static cvc_status pragma_int(struct merge *m, const char *sql, int *v)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	if ((ret = prep(m, sql, &st)))
		return ret;
	rc = sqlite3_step(st);
	*v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return src_fail(m);
	return CVC_OK;
}

static cvc_status target_run_name(struct merge *m)
{
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(cvc_db_sqlite(m->db), "SELECT name FROM runs WHERE id=?", -1, &st,
			       NULL) != SQLITE_OK)
		return dst_fail(m, "reading run");
	sqlite3_bind_int64(st, 1, m->run_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(m->target_name, sizeof m->target_name, "%s",
			 (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc == SQLITE_DONE)
		return cvc_db_fail(m->db, CVC_ERR_NOTFOUND, "'%s': no run with id %lld",
				   cvc_db_path(m->db), (long long)m->run_id);
	if (rc != SQLITE_ROW)
		return dst_fail(m, "reading run");
	return CVC_OK;
}

/* Merging a file into itself would read rows while writing them. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

cvc_status cvc_import_cvcdb(cvc_db *db, int64_t run_id, const char *path,
			    const cvc_import_opts *opts, cvc_import_stats *stats)
{
	struct merge m = {.db = db, .run_id = run_id, .path = path};
	sqlite3_stmt *runs = NULL;
	char *tmp = NULL;
	int app = 0, ver = 0, rc;
	cvc_status ret;

	if (same_file(path, cvc_db_path(db)))
		return cvc_db_fail(db, CVC_ERR_USAGE, "'%s': cannot merge a database into itself",
				   path);
	if ((ret = target_run_name(&m)))
		return ret;
	/* Shards shipped between nodes compressed: detection already looked through gzip. */
	if ((ret = imp_gunzip_temp(db, path, &tmp)))
		return ret;
	if (sqlite3_open_v2(tmp ? tmp : imp_open_name(path), &m.src, SQLITE_OPEN_READONLY,
			    NULL) != SQLITE_OK) {
		ret = m.src ? cvc_db_fail(db, CVC_ERR_IO, "'%s': cannot open: %s", path,
					  sqlite3_errmsg(m.src))
			    : cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory opening '%s'", path);
		goto out;
	}
	if ((ret = imp_foreign_check(db, m.src, path)) ||
	    (ret = pragma_int(&m, "PRAGMA application_id", &app)) ||
	    (ret = pragma_int(&m, "PRAGMA user_version", &ver)))
		goto out;
	if ((uint32_t)app != CVC_DB_APP_ID || ver < 1) {
		ret = cvc_db_fail(db, CVC_ERR_VERSION,
				  "'%s': not a cvc database (application_id 0x%08x, schema "
				  "version %d)",
				  path, (unsigned)app, ver);
		goto out;
	}
	if (ver > CVC_DB_SCHEMA_VERSION) {
		ret = cvc_db_fail(db, CVC_ERR_VERSION,
				  "'%s': schema version %d is newer than this cvc reads (%d): "
				  "merge it with a newer cvc",
				  path, ver, CVC_DB_SCHEMA_VERSION);
		goto out;
	}
	m.ver = ver;
	if ((ret = prep(&m,
			"SELECT id, format, source, tool_version, gpu_model, nccl_version, "
			"world_size FROM runs ORDER BY id",
			&runs)))
		goto out;
	while ((rc = sqlite3_step(runs)) == SQLITE_ROW) {
		if ((ret = merge_run(&m, sqlite3_column_int64(runs, 0), runs)))
			goto out;
	}
	if (rc != SQLITE_DONE) {
		ret = src_fail(&m);
		goto out;
	}
	imp_progress(opts, path, 1, 1);
	imp_stats_add(stats, &m.n);
out:
	sqlite3_finalize(runs);
	if (m.src)
		sqlite3_close(m.src);
	if (tmp) {
		cvc_db_remove_files(tmp);
		cvc_tmp_forget(tmp);
		free(tmp);
	}
	free(m.map);
	return ret;
}
