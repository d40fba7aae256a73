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
 * where the importer numbered them itself, ranks.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "cvc/cvc_import.h"
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
	int64_t rows, acts, colls, ranges, nt, shapes, launches;
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
		if (imp_grow((void **)&m->map, &cap, m->nmap + 1, sizeof *m->map, CDB_MAX_RANKS)) {
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

static cvc_status merge_devices(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	if ((ret = prep(m,
			"SELECT rank, device, name, sm_count, total_mem_bytes, cc_major, "
			"cc_minor, mem_bw_gbps, clock_khz FROM devices WHERE run_id=?",
			&st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_device_info d = {
			.rank = map_rank(m, sqlite3_column_int(st, 0)),
			.device = sqlite3_column_int(st, 1),
			.name = col_text(st, 2),
			.sm_count = (int)col_i64(st, 3, 0),
			.total_mem_bytes = col_i64(st, 4, 0),
			.cc_major = (int)col_i64(st, 5, -1),
			.cc_minor = (int)col_i64(st, 6, -1),
			.mem_bw_gbps = sqlite3_column_double(st, 7),
			.clock_khz = col_i64(st, 8, 0),
		};

		if ((ret = cvc_db_device_put(m->db, m->run_id, &d)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
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

static cvc_status merge_sources(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	if ((ret = prep(m, "SELECT path, format, rank, events FROM sources WHERE run_id=? "
			   "ORDER BY id", &st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *p = col_text(st, 0), *f = col_text(st, 1);
		int rank = sqlite3_column_type(st, 2) == SQLITE_NULL
				   ? -1 : map_rank(m, sqlite3_column_int(st, 2));

		if ((ret = cvc_db_source_add(m->db, m->run_id, p ? p : "", f ? f : "unknown", rank,
					     col_i64(st, 3, 0), NULL)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	return ret;
}

static cvc_status merge_activities(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	/* One pass, in id order: a collective follows its activity's new id. */
	if ((ret = prep(m,
			"SELECT a.rank, a.device, a.kind, s.value, a.start_ns, a.end_ns, "
			"a.stream, a.context, a.correlation, a.external_id, a.grid_x, a.grid_y, "
			"a.grid_z, a.block_x, a.block_y, a.block_z, a.registers, "
			"a.shared_mem_bytes, a.bytes, a.copy_kind, "
			"c.activity_id, c.coll, c.dtype, c.in_nelems, c.out_nelems, c.bytes, "
			"c.group_size, c.pg_name, c.pg_desc, c.pg_ranks, c.algo, c.proto, c.root "
			"FROM activities a LEFT JOIN strings s ON s.id=a.name_id "
			"LEFT JOIN collectives c ON c.activity_id=a.id "
			"WHERE a.run_id=? ORDER BY a.id",
			&st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_activity a = {.run_id = m->run_id};
		const char *name = col_text(st, 3);
		int64_t id;

		m->rows++;
		if (!name) {
			ret = cvc_db_fail(m->db, CVC_ERR_FORMAT,
					  "'%s': activity %lld: name id not in table strings", m->path,
					  (long long)m->rows);
			goto out;
		}
		a.rank = map_rank(m, sqlite3_column_int(st, 0));
		a.device = sqlite3_column_int(st, 1);
		a.kind = (cvc_act_kind)sqlite3_column_int(st, 2);
		a.start_ns = sqlite3_column_int64(st, 4);
		a.end_ns = sqlite3_column_int64(st, 5);
		a.stream = col_i64(st, 6, -1);
		a.context = col_i64(st, 7, -1);
		a.correlation = col_i64(st, 8, -1);
		a.external_id = col_i64(st, 9, -1);
		for (int i = 0; i < 3; i++) {
			a.grid[i] = (int32_t)col_i64(st, 10 + i, 0);
			a.block[i] = (int32_t)col_i64(st, 13 + i, 0);
		}
		a.registers = (int32_t)col_i64(st, 16, 0);
		a.shared_mem_bytes = col_i64(st, 17, 0);
		a.bytes = col_i64(st, 18, 0);
		a.copy_kind = (int32_t)col_i64(st, 19, 0);
		if ((ret = cvc_db_intern(m->db, name, (size_t)sqlite3_column_bytes(st, 3),
					 &a.name_id)) ||
		    (ret = cvc_db_activity_add(m->db, &a, &id))) {
			if (ret == CVC_ERR_FORMAT) {
				char why[512];

				snprintf(why, sizeof why, "%s", cvc_db_errmsg(m->db));
				ret = cvc_db_fail(m->db, ret, "'%s': activity %lld: %s", m->path,
						  (long long)m->acts + 1, why);
			}
			goto out;
		}
		m->acts++;
		if (sqlite3_column_type(st, 20) != SQLITE_NULL) {
			cvc_collective c = {
				.activity_id = id,
				.coll = col_text(st, 21),
				.dtype = col_text(st, 22),
				.in_nelems = col_i64(st, 23, -1),
				.out_nelems = col_i64(st, 24, -1),
				.bytes = col_i64(st, 25, -1),
				.group_size = (int)col_i64(st, 26, 0),
				.pg_name = col_text(st, 27),
				.pg_desc = col_text(st, 28),
				.pg_ranks = col_text(st, 29),
				.algo = col_text(st, 30),
				.proto = col_text(st, 31),
				.root = (int)col_i64(st, 32, -1),
			};

			if ((ret = cvc_db_collective_add(m->db, &c)))
				goto out;
			m->colls++;
		}
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	return ret;
}

static cvc_status merge_ranges(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	if ((ret = prep(m,
			"SELECT r.rank, r.device, r.kind, s.value, r.start_ns, r.end_ns, r.tid, "
			"r.domain FROM ranges r LEFT JOIN strings s ON s.id=r.name_id "
			"WHERE r.run_id=? ORDER BY r.id",
			&st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_range r = {.run_id = m->run_id};
		const char *name = col_text(st, 3);

		m->rows++;
		if (!name) {
			ret = cvc_db_fail(m->db, CVC_ERR_FORMAT,
					  "'%s': range %lld: name id not in table strings", m->path,
					  (long long)m->rows);
			goto out;
		}
		r.rank = map_rank(m, sqlite3_column_int(st, 0));
		r.device = sqlite3_column_int(st, 1);
		r.kind = (cvc_range_kind)sqlite3_column_int(st, 2);
		r.start_ns = sqlite3_column_int64(st, 4);
		r.end_ns = sqlite3_column_int64(st, 5);
		r.tid = col_i64(st, 6, -1);
		r.domain = col_text(st, 7);
		if ((ret = cvc_db_intern(m->db, name, (size_t)sqlite3_column_bytes(st, 3),
					 &r.name_id)) ||
		    (ret = cvc_db_range_add(m->db, &r)))
			goto out;
		m->ranges++;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	return ret;
}


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
		m->launches++;
	}
	return rc == SQLITE_DONE ? CVC_OK : src_fail(m);
}

/* op_shapes rows (GEMM-like ops with their Input Dims) and their
 * op_launches; a shard written before a table existed has none to give. */
static cvc_status merge_op_shapes(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL, *lq = NULL;
	cvc_status ret;
	int rc, has;

	if ((has = cvc_db_sqlite_has_table(m->src, "op_shapes")) < 0)
		return src_fail(m);
	if (!has)
		return CVC_OK;
	if ((has = cvc_db_sqlite_has_table(m->src, "op_launches")) < 0)
		return src_fail(m);
	if (has && (ret = prep(m, "SELECT correlation FROM op_launches WHERE shape_id=?", &lq)))
		return ret;
	if ((ret = prep(m,
			"SELECT o.rank, o.external_id, s.value, o.dims, o.types, o.id "
			"FROM op_shapes o LEFT JOIN strings s ON s.id=o.name_id "
			"WHERE o.run_id=? ORDER BY o.id",
			&st)))
		goto out;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_op_shape r = {.run_id = m->run_id};
		const char *name = col_text(st, 2);
		int64_t new_id;

		m->rows++;
		r.dims = col_text(st, 3);
		if (!name || !r.dims) {
			ret = cvc_db_fail(m->db, CVC_ERR_FORMAT,
					  "'%s': op shape %lld: name id not in table strings or no dims",
					  m->path, (long long)m->rows);
			goto out;
		}
		r.rank = map_rank(m, sqlite3_column_int(st, 0));
		r.external_id = sqlite3_column_int64(st, 1);
		r.dims_len = (size_t)sqlite3_column_bytes(st, 3);
		r.types = col_text(st, 4);
		r.types_len = r.types ? (size_t)sqlite3_column_bytes(st, 4) : 0;
		if ((ret = cvc_db_intern(m->db, name, (size_t)sqlite3_column_bytes(st, 2),
					 &r.name_id)) ||
		    (ret = cvc_db_op_shape_add(m->db, &r, &new_id)))
			goto out;
		m->shapes++;
		if (lq && (ret = merge_launches(m, lq, sqlite3_column_int64(st, 5), new_id, r.rank)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
	sqlite3_finalize(lq);
	return ret;
}

static cvc_status merge_nccl_tests(struct merge *m, int64_t src_run)
{
	sqlite3_stmt *st = NULL;
	cvc_status ret;
	int rc;

	/* schema 3 added gpus_per_node and algo */
	if ((ret = prep(m,
			m->ver >= 3
				? "SELECT op, nranks, size_bytes, count, dtype, redop, root, in_place, "
				  "time_us, algbw_gbps, busbw_gbps, wrong, gpus_per_node, algo "
				  "FROM nccl_tests WHERE run_id=? ORDER BY id"
				: "SELECT op, nranks, size_bytes, count, dtype, redop, root, in_place, "
				  "time_us, algbw_gbps, busbw_gbps, wrong, NULL, NULL "
				  "FROM nccl_tests WHERE run_id=? ORDER BY id",
			&st)))
		return ret;
	sqlite3_bind_int64(st, 1, src_run);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *op = col_text(st, 0);
		cvc_nccltest_row r = {
			.run_id = m->run_id,
			.op = op ? op : "unknown",
			.nranks = (int)col_i64(st, 1, 0),
			.size_bytes = sqlite3_column_int64(st, 2),
			.count = sqlite3_column_int64(st, 3),
			.dtype = col_text(st, 4),
			.redop = col_text(st, 5),
			.root = (int)col_i64(st, 6, -1),
			.in_place = sqlite3_column_int(st, 7),
			.time_us = sqlite3_column_double(st, 8),
			.algbw_gbps = sqlite3_column_double(st, 9),
			.busbw_gbps = sqlite3_column_double(st, 10),
			.wrong = col_i64(st, 11, -1),
			.gpus_per_node = (int)col_i64(st, 12, 0),
			.algo = col_text(st, 13),
		};

		m->rows++;
		if ((ret = cvc_db_nccltest_add(m->db, &r)))
			goto out;
		m->nt++;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(m);
out:
	sqlite3_finalize(st);
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
	if ((ret = merge_ranks(m, src_run, &rs)) || (ret = merge_devices(m, src_run)) ||
	    (ret = merge_meta(m, src_run)) || (ret = merge_sources(m, src_run)) ||
	    (ret = merge_activities(m, src_run)) || (ret = merge_ranges(m, src_run)) ||
	    (ret = merge_nccl_tests(m, src_run)) || (ret = merge_op_shapes(m, src_run)))
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
	if (stats) {
		stats->events += m.rows;
		stats->activities += m.acts;
		stats->collectives += m.colls;
		stats->ranges += m.ranges;
		stats->nccl_rows += m.nt;
		stats->op_shapes += m.shapes;
		stats->op_launches += m.launches;
	}
out:
	sqlite3_finalize(runs);
	if (m.src)
		sqlite3_close(m.src);
	if (tmp) {
		cvc_db_remove_files(tmp);
		imp_tmp_forget(tmp);
		free(tmp);
	}
	free(m.map);
	return ret;
}
