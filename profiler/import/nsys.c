/*
 * nsys.c - Nsight Systems SQLite exports (`nsys export --type=sqlite`).
 *
 * The export is read through its own read-only connection rather than
 * ATTACHed to the cvc database: the caller holds a write transaction on
 * that connection, and an attached file that has been read inside a
 * transaction cannot be DETACHed until it commits.  A second connection on
 * another file shares no locks with the first, so this is free.
 *
 * Tables are created lazily by nsys and columns come and go between schema
 * versions (2.9.1 has no greenContextId, 3.28 adds TARGET_INFO_CUDA_DEVICE),
 * so every table and column is probed before a statement is built; a
 * missing column reads as NULL.  Every table is read with one streaming
 * SELECT that resolves names with a join on StringIds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cvc/cvc_import.h"
#include "cvc/cvc_out.h"
#include "cvc/cvc_vocab.h"
#include "import_int.h"

/* A report with more GPU processes than this is not a real capture. */
#define NSYS_MAX_PROCS 65536
/* Domains are created once per library; a few thousand is already absurd. */
#define NSYS_MAX_DOMAINS 4096
/* Progress is reported every this many rows. */
#define NSYS_PROGRESS_ROWS 65536

/* nsys packs ids: globalTid = pid << 24 | tid, plus the VM id above. */
#define NSYS_PID_OF(g) (((g) >> 24) & 0xFFFFFF)
#define NSYS_PROC_OF(gtid) ((gtid) & ~(int64_t)0xFFFFFF)

struct nsys_proc {
	int64_t gpid;
	int rank;
};

struct nsys_domain {
	int64_t id;
	char *name;
};

struct nsys {
	cvc_db *db;
	int64_t run_id;
	const char *path;      /* the user's path, for messages */
	sqlite3 *src;
	const cvc_import_opts *opts;
	struct nsys_proc *procs;
	size_t nprocs;
	struct nsys_domain *domains;
	size_t ndomains;
	char *gpu_model;
	int64_t rows;           /* rows read, all tables */
	int64_t acts, ranges;
	int64_t nvtx_orphans;   /* ranges of processes without GPU work */
	int64_t untimed;        /* activity rows CUPTI could not time (0, 0) */
	int64_t dups[3];        /* rows of each activity table left out as repeats */
	int have_launch;        /* temp.cvc_nsys_launch holds the runtime calls */
	int64_t total_rows;     /* for progress only; 0 when not counted */
	struct imp_nsys_session sess; /* its start, host, launcher's rank */
	int env_rank_used;
};

/* Any failure of the export's connection means the file is damaged. */
static cvc_status src_fail(struct nsys *n)
{
	return cvc_db_fail(n->db, CVC_ERR_FORMAT, "'%s': corrupt or unreadable SQLite file: %s",
			   n->path, sqlite3_errmsg(n->src));
}


static int has_column(struct nsys *n, const char *table, const char *col)
{
	sqlite3_stmt *st = NULL;
	int found;

	if (sqlite3_prepare_v2(n->src, "SELECT 1 FROM pragma_table_info(?) WHERE name=?", -1,
			       &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, col, -1, SQLITE_STATIC);
	switch (sqlite3_step(st)) {
	case SQLITE_ROW: found = 1; break;
	case SQLITE_DONE: found = 0; break;
	default: found = -1; break;
	}
	sqlite3_finalize(st);
	return found;
}

/* A growable SQL text with a hard cap: statements here are a few hundred bytes. */
struct sqlbuf {
	char s[4096];
	size_t len;
	int overflow;
};

static void sb_add(struct sqlbuf *b, const char *fmt, const char *a, const char *c)
{
	int k;

	if (b->overflow)
		return;
	k = snprintf(b->s + b->len, sizeof b->s - b->len, fmt, a, c);
	if (k < 0 || (size_t)k >= sizeof b->s - b->len)
		b->overflow = 1;
	else
		b->len += (size_t)k;
}

/*
 * Appends "alias.col" when the column exists, else "NULL", so the column
 * positions of the result stay fixed whatever the schema version.
 */
static int sb_col(struct nsys *n, struct sqlbuf *b, const char *table, const char *alias,
		  const char *col)
{
	int h = has_column(n, table, col);

	if (h < 0)
		return -1;
	if (b->len && b->s[b->len - 1] != ' ')
		sb_add(b, ", ", "", "");
	if (h)
		sb_add(b, "%s.\"%s\"", alias, col);
	else
		sb_add(b, "NULL", "", "");
	return h;
}

static int proc_cmp(const void *a, const void *b)
{
	const struct nsys_proc *x = a, *y = b;

	return (x->gpid > y->gpid) - (x->gpid < y->gpid);
}

/* Rank of a process, or -1 when it did no GPU work (none did: no
 * process list, which bsearch() may not be handed). */
static int proc_rank(const struct nsys *n, int64_t gpid)
{
	struct nsys_proc key = {.gpid = gpid}, *p;

	if (n->nprocs == 0)
		return -1;
	p = bsearch(&key, n->procs, n->nprocs, sizeof *n->procs, proc_cmp);
	return p ? p->rank : -1;
}

/* The activity tables we import; any of them may be absent. */
static const char *const act_tables[] = {
	"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"
};
enum { N_ACT_TABLES = 3 };

/* Reads the META table's value for key into out; "" when unknown. */
static cvc_status meta_value(struct nsys *n, const char *table, const char *key, char *out,
			     size_t cap)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	int rc;

	out[0] = '\0';
	if (!table)
		return CVC_OK;
	snprintf(sql, sizeof sql, "SELECT value FROM \"%s\" WHERE name=?", table);
	if (sqlite3_prepare_v2(n->src, sql, -1, &st, NULL) != SQLITE_OK)
		return src_fail(n);
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return src_fail(n);
	return CVC_OK;
}

/*
 * Looks up the TARGET_INFO_GPU row of a process's CUDA device ordinal and
 * stores it as device `dev` of `rank`.  Through TARGET_INFO_CUDA_DEVICE when
 * the export has it; older exports number activities by TARGET_INFO_GPU.id.
 */
static cvc_status put_device(struct nsys *n, int have_gpu, int have_map, int rank,
			     int64_t gpid, int dev)
{
	cvc_device_info di = {.rank = rank, .device = dev, .cc_major = -1, .cc_minor = -1};
	sqlite3_stmt *st = NULL;
	int64_t gpu_id = dev;
	char name[256] = "";
	cvc_status ret = CVC_OK;
	int rc;

	if (have_map) {
		if (sqlite3_prepare_v2(n->src,
				       "SELECT gpuId FROM TARGET_INFO_CUDA_DEVICE WHERE cudaId=? "
				       "AND (pid=? OR pid IS NULL) ORDER BY pid IS NULL LIMIT 1",
				       -1, &st, NULL) != SQLITE_OK)
			return src_fail(n);
		sqlite3_bind_int(st, 1, dev);
		sqlite3_bind_int64(st, 2, NSYS_PID_OF(gpid));
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
			gpu_id = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		st = NULL;
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return src_fail(n);
	}
	if (have_gpu) {
		struct sqlbuf b = {.len = 0};

		sb_add(&b, "SELECT ", "", "");
		if (sb_col(n, &b, "TARGET_INFO_GPU", "g", "name") < 0 ||
		    sb_col(n, &b, "TARGET_INFO_GPU", "g", "smCount") < 0 ||
		    sb_col(n, &b, "TARGET_INFO_GPU", "g", "totalMemory") < 0 ||
		    sb_col(n, &b, "TARGET_INFO_GPU", "g", "computeMajor") < 0 ||
		    sb_col(n, &b, "TARGET_INFO_GPU", "g", "computeMinor") < 0 ||
		    sb_col(n, &b, "TARGET_INFO_GPU", "g", "memoryBandwidth") < 0 ||
		    sb_col(n, &b, "TARGET_INFO_GPU", "g", "clockRate") < 0)
			return src_fail(n);
		sb_add(&b, " FROM TARGET_INFO_GPU g WHERE g.id=? LIMIT 1", "", "");
		if (b.overflow)
			return cvc_db_fail(n->db, CVC_ERR_INTERNAL, "nsys: statement too long");
		if (sqlite3_prepare_v2(n->src, b.s, -1, &st, NULL) != SQLITE_OK)
			return src_fail(n);
		sqlite3_bind_int64(st, 1, gpu_id);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			if (sqlite3_column_text(st, 0)) {
				snprintf(name, sizeof name, "%s",
					 (const char *)sqlite3_column_text(st, 0));
				di.name = name;
			}
			di.sm_count = sqlite3_column_int(st, 1);
			di.total_mem_bytes = sqlite3_column_int64(st, 2);
			if (sqlite3_column_type(st, 3) != SQLITE_NULL)
				di.cc_major = sqlite3_column_int(st, 3);
			if (sqlite3_column_type(st, 4) != SQLITE_NULL)
				di.cc_minor = sqlite3_column_int(st, 4);
			/* memoryBandwidth is bytes/s, clockRate Hz. */
			di.mem_bw_gbps = sqlite3_column_double(st, 5) / 1e9;
			di.clock_khz = sqlite3_column_int64(st, 6) / 1000;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return src_fail(n);
	}
	if (di.name && !n->gpu_model) {
		n->gpu_model = strdup(di.name);
		if (!n->gpu_model)
			return cvc_db_fail(n->db, CVC_ERR_NOMEM, "out of memory");
	}
	ret = cvc_db_device_put(n->db, n->run_id, &di);
	return ret;
}

/*
 * Every process with GPU activity becomes a rank, in globalPid order,
 * numbered from the run's first free rank; its devices are stored with it.
 * An export of one such process takes the rank its launcher gave it when
 * that rank is free (its DeviceEnvironment: SLURM_PROCID, RANK, ...), so
 * the reports of a job are its ranks whatever order they are imported in.
 */
static cvc_status find_ranks(struct nsys *n, const int *have_act)
{
	struct sqlbuf b = {.len = 0};
	sqlite3_stmt *st = NULL;
	int have_gpu, have_map, rc, nsel = 0;
	int64_t last = 0;
	size_t cap = 0;
	cvc_status ret = CVC_OK;

	if ((have_gpu = cvc_db_sqlite_has_table(n->src, "TARGET_INFO_GPU")) < 0 ||
	    (have_map = cvc_db_sqlite_has_table(n->src, "TARGET_INFO_CUDA_DEVICE")) < 0)
		return src_fail(n);
	if (have_map) {
		int a = has_column(n, "TARGET_INFO_CUDA_DEVICE", "gpuId");
		int c = has_column(n, "TARGET_INFO_CUDA_DEVICE", "cudaId");
		int p = has_column(n, "TARGET_INFO_CUDA_DEVICE", "pid");

		if (a < 0 || c < 0 || p < 0)
			return src_fail(n);
		have_map = a && c && p;
	}
	if (have_gpu) {
		/* a GPU table without its key cannot name any device: as absent */
		int id = has_column(n, "TARGET_INFO_GPU", "id");

		if (id < 0)
			return src_fail(n);
		have_gpu = id;
	}
	/* the processes' count beside each row, from the one union: a report of
	 * one GPU process takes its launcher's rank */
	sb_add(&b, "WITH u(g, d) AS MATERIALIZED (", "", "");
	for (int i = 0; i < N_ACT_TABLES; i++) {
		int hg, hd;

		if (!have_act[i])
			continue;
		if ((hg = has_column(n, act_tables[i], "globalPid")) < 0 ||
		    (hd = has_column(n, act_tables[i], "deviceId")) < 0)
			return src_fail(n);
		/* globalPid must be an integer (or NULL: process 0): the union
		 * orders by the stored value and proc_rank() bisects its integer,
		 * and SQLite sorts text and blobs after every number, so one such
		 * cell would leave the process list out of integer order */
		if (hg) {
			int64_t row = 0;
			char type[16];
			int bad = imp_nsys_bad_gpid(n->src, act_tables[i], &row, type, sizeof type);

			if (bad < 0)
				return src_fail(n);
			if (bad)
				return cvc_db_fail(n->db, CVC_ERR_FORMAT,
						   "'%s': table %s, rowid %lld: expected an integer "
						   "globalPid, found %s", n->path, act_tables[i],
						   (long long)row, type);
		}
		sb_add(&b, nsel ? " UNION SELECT %s AS g, %s AS d" : "SELECT %s AS g, %s AS d",
		       hg ? "globalPid" : "0", hd ? "deviceId" : "0");
		sb_add(&b, " FROM \"%s\"%s", act_tables[i], "");
		nsel++;
	}
	sb_add(&b, ") SELECT g, d, (SELECT count(DISTINCT g) FROM u) FROM u ORDER BY g, d", "", "");
	if (nsel == 0)
		return CVC_OK;
	if (b.overflow)
		return cvc_db_fail(n->db, CVC_ERR_INTERNAL, "nsys: statement too long");
	if (sqlite3_prepare_v2(n->src, b.s, -1, &st, NULL) != SQLITE_OK)
		return src_fail(n);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t g = sqlite3_column_int64(st, 0);
		int dev = sqlite3_column_int(st, 1);

		/* one GPU process: the launcher's rank, when it gave one that is free */
		if (n->nprocs == 0)
			n->env_rank_used = sqlite3_column_int64(st, 2) == 1 && n->sess.env.rank >= 0 &&
					   imp_rank_free(n->db, n->run_id, n->sess.env.rank);
		if (n->nprocs == 0 || g != last) {
			cvc_rank_info ri = {0};

			if (n->nprocs == NSYS_MAX_PROCS) {
				ret = cvc_db_fail(n->db, CVC_ERR_FORMAT,
						  "'%s': more than %d processes with GPU activity",
						  n->path, NSYS_MAX_PROCS);
				goto out;
			}
			if (cvc_grow_bounded(&n->procs, &cap, n->nprocs + 1, sizeof *n->procs,
					     NSYS_MAX_PROCS)) {
				ret = cvc_db_fail(n->db, CVC_ERR_NOMEM, "out of memory");
				goto out;
			}
			if (n->env_rank_used)
				ri.rank = n->sess.env.rank;
			else if ((ret = imp_next_free_rank(n->db, n->run_id, &ri.rank)))
				goto out;
			ri.pid = NSYS_PID_OF(g);
			ri.host = n->sess.host[0] ? n->sess.host : NULL;
			ri.clock_offset_ns = n->sess.clock_offset;
			if ((ret = cvc_db_rank_put(n->db, n->run_id, &ri)))
				goto out;
			n->procs[n->nprocs].gpid = g;
			n->procs[n->nprocs].rank = ri.rank;
			n->nprocs++;
			last = g;
		}
		if ((ret = put_device(n, have_gpu, have_map, n->procs[n->nprocs - 1].rank, g, dev)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(n);
out:
	sqlite3_finalize(st);
	return ret;
}

/* A copy's name from its kind (ENUM_CUDA_MEMCPY_OPER: CUPTI's kinds, then
 * Nsight's own 11-13 for unified memory), in buf. */
static const char *memcpy_name(int kind, char *buf, size_t len)
{
	static const char *const unified[] = {"HtoD", "DtoH", "DtoD"};
	const char *w = kind >= 0 ? cvc_copy_kind_word((unsigned)kind) : NULL;

	if (w)
		snprintf(buf, len, "Memcpy %s", w);
	else if (kind >= 11 && kind <= 13)
		snprintf(buf, len, "Memcpy %s (unified)", unified[kind - 11]);
	else
		snprintf(buf, len, "Memcpy");
	return buf;
}

/*
 * A copy's or memset's memory kind in column col, in the words Kineto and
 * cvc's own profiler put in the name (cvc_mem_kind_name), so a copy has one
 * name whichever recorded it.  Nsight numbers them its own way
 * (ENUM_CUDA_MEM_KIND in its exports: 0 Pageable .. 6 Managed Static, 7
 * Unknown), one after CUPTI's, which starts at Unknown.  NULL: an older
 * export without the column.
 */
static const char *mem_kind(sqlite3_stmt *st, int col)
{
	int v;

	if (sqlite3_column_type(st, col) != SQLITE_INTEGER)
		return NULL;
	v = sqlite3_column_int(st, col);
	return cvc_mem_kind_name(v >= 0 && v < 7 ? (unsigned)v + 1 : 0);
}

static void progress(struct nsys *n)
{
	if (n->rows % NSYS_PROGRESS_ROWS == 0)
		imp_progress(n->opts, n->path, n->rows, n->total_rows);
}

/*
 * Rows to read, counted only when someone shows progress: a count is a
 * walk over each table's pages, cheap next to the import but not free.
 */
static cvc_status count_rows(struct nsys *n, const int *have_act, int have_nvtx)
{
	char sql[128];

	for (int i = 0; i <= N_ACT_TABLES; i++) {
		sqlite3_stmt *st = NULL;
		int rc;

		if (i < N_ACT_TABLES ? !have_act[i] : !have_nvtx)
			continue;
		snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"",
			 i < N_ACT_TABLES ? act_tables[i] : "NVTX_EVENTS");
		if (sqlite3_prepare_v2(n->src, sql, -1, &st, NULL) != SQLITE_OK)
			return src_fail(n);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			n->total_rows += sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (rc != SQLITE_ROW)
			return src_fail(n);
	}
	return CVC_OK;
}

/* Columns read from every activity table, in this order; then the launch
 * time (NULL when unknown), the row's rowid (what an error names: a row
 * count would miss the duplicates left out), then the table's own columns
 * from X_COL. */
static const char *const act_cols[] = {
	"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid"
};
enum { N_ACT_COLS = 7, LAUNCH_COL = N_ACT_COLS, ROWID_COL, X_COL };

/* The SELECT of activity table `which` into b, columns as act_cols and
 * LAUNCH_COL / X_COL say; the launch time joined by process and
 * correlation id (imp_nsys_launch_table). */
static cvc_status act_query(struct nsys *n, int which, struct sqlbuf *b)
{
	const char *t = act_tables[which];
	int hs = 1, hd = 1, hg, hc;

	sb_add(b, "SELECT ", "", "");
	for (int i = 0; i < N_ACT_COLS; i++)
		if (sb_col(n, b, t, "a", act_cols[i]) < 0)
			return src_fail(n);
	if ((hg = has_column(n, t, "globalPid")) < 0 || (hc = has_column(n, t, "correlationId")) < 0)
		return src_fail(n);
	sb_add(b, ", %s, a.rowid", n->have_launch && hg && hc ? "l.ts" : "NULL", "");
	if (which == 0) {
		static const char *const kcols[] = {
			"gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
			"registersPerThread", "staticSharedMemory", "dynamicSharedMemory"
		};

		for (size_t i = 0; i < sizeof kcols / sizeof kcols[0]; i++)
			if (sb_col(n, b, t, "a", kcols[i]) < 0)
				return src_fail(n);
		if ((hd = has_column(n, t, "demangledName")) < 0 ||
		    (hs = has_column(n, t, "shortName")) < 0)
			return src_fail(n);
		sb_add(b, ", coalesce(%s, %s)", hd ? "d.value" : "NULL", hs ? "s.value" : "NULL");
		sb_add(b, " FROM \"%s\" a", t, "");
		if (hd)
			sb_add(b, " LEFT JOIN StringIds d ON d.id=a.demangledName", "", "");
		if (hs)
			sb_add(b, " LEFT JOIN StringIds s ON s.id=a.shortName", "", "");
	} else {
		if (sb_col(n, b, t, "a", "bytes") < 0 ||
		    sb_col(n, b, t, "a", which == 1 ? "copyKind" : "memKind") < 0 ||
		    (which == 1 && (sb_col(n, b, t, "a", "srcKind") < 0 ||
				    sb_col(n, b, t, "a", "dstKind") < 0)))
			return src_fail(n);
		sb_add(b, " FROM \"%s\" a", t, "");
	}
	if (n->have_launch && hg && hc)
		sb_add(b, " LEFT JOIN temp.cvc_nsys_launch l ON l.proc=a.globalPid & ~16777215 "
			  "AND l.corr=a.correlationId", "", "");
	if (n->dups[which])
		sb_add(b, " WHERE a.rowid NOT IN temp.cvc_nsys_dup", "", "");
	if (b->overflow)
		return cvc_db_fail(n->db, CVC_ERR_INTERNAL, "nsys: statement too long");
	return CVC_OK;
}

static cvc_status import_activities(struct nsys *n, int which)
{
	const char *t = act_tables[which];
	struct sqlbuf b = {.len = 0};
	sqlite3_stmt *st = NULL;
	cvc_status ret = CVC_OK;
	int rc;

	/* one activity written twice is imported once (nsys_notes.c) */
	if (imp_nsys_dup_rows(n->src, t, &n->dups[which]))
		return src_fail(n);
	if ((ret = act_query(n, which, &b)))
		return ret;
	if (sqlite3_prepare_v2(n->src, b.s, -1, &st, NULL) != SQLITE_OK) {
		ret = src_fail(n);
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_activity a = {.run_id = n->run_id};
		const char *name;
		char full[64], base[48];
		size_t len;
		long long row = sqlite3_column_int64(st, ROWID_COL);

		n->rows++;
		progress(n);
		a.start_ns = sqlite3_column_int64(st, 0);
		a.end_ns = sqlite3_column_int64(st, 1);
		/* integers only: SQLite reads 'abc' as 0 and wraps 2^32 to 0 */
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(st, 1) != SQLITE_INTEGER || a.end_ns < a.start_ns) {
			ret = cvc_db_fail(n->db, CVC_ERR_FORMAT,
					  "'%s': table %s, rowid %lld: expected integer start <= end",
					  n->path, t, row);
			goto out;
		}
		/* start = end = 0: CUPTI could not time it; stored, it would stretch
		 * the span to t = 0.  Counted, as cvc's profiler does */
		if (a.start_ns == 0 && a.end_ns == 0) {
			n->untimed++;
			continue;
		}
		if (sqlite3_column_type(st, 2) != SQLITE_INTEGER ||
		    sqlite3_column_int64(st, 2) < 0 || sqlite3_column_int64(st, 2) > 65535) {
			ret = cvc_db_fail(n->db, CVC_ERR_FORMAT,
					  "'%s': table %s, rowid %lld: expected a device index 0..65535",
					  n->path, t, row);
			goto out;
		}
		a.device = sqlite3_column_int(st, 2);
		a.context = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1
								     : sqlite3_column_int64(st, 3);
		a.stream = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1
								    : sqlite3_column_int64(st, 4);
		a.correlation = sqlite3_column_type(st, 5) == SQLITE_NULL
					? -1 : sqlite3_column_int64(st, 5);
		a.external_id = -1;
		if (sqlite3_column_type(st, LAUNCH_COL) == SQLITE_INTEGER) {
			a.has_launch = 1;
			a.launch_ns = sqlite3_column_int64(st, LAUNCH_COL);
		}
		a.rank = proc_rank(n, sqlite3_column_int64(st, 6));
		if (a.rank < 0) {
			ret = cvc_db_fail(n->db, CVC_ERR_INTERNAL,
					  "'%s': process %lld has no rank", n->path,
					  (long long)sqlite3_column_int64(st, 6));
			goto out;
		}
		if (which == 0) {
			a.kind = CVC_ACT_KERNEL;
			for (int i = 0; i < 3; i++) {
				a.grid[i] = sqlite3_column_int(st, X_COL + i);
				a.block[i] = sqlite3_column_int(st, X_COL + 3 + i);
			}
			a.registers = sqlite3_column_int(st, X_COL + 6);
			a.shared_mem_bytes = sqlite3_column_int64(st, X_COL + 7) +
					     sqlite3_column_int64(st, X_COL + 8);
			name = (const char *)sqlite3_column_text(st, X_COL + 9);
			if (!name)
				name = "(unnamed kernel)";
		} else {
			a.bytes = sqlite3_column_int64(st, X_COL);
			if (which == 1) {
				const char *src = mem_kind(st, X_COL + 2),
					   *dst = mem_kind(st, X_COL + 3);

				a.kind = CVC_ACT_MEMCPY;
				a.copy_kind = sqlite3_column_int(st, X_COL + 1);
				name = memcpy_name(a.copy_kind, base, sizeof base);
				/* CUPTI's kinds only: Nsight's unified ones say it already */
				if (src && dst && cvc_copy_kind_word((unsigned)a.copy_kind)) {
					snprintf(full, sizeof full, "%s (%s -> %s)", name, src, dst);
					name = full;
				}
			} else {
				const char *mk = mem_kind(st, X_COL + 1);

				a.kind = CVC_ACT_MEMSET;
				name = "Memset";
				if (mk) {
					snprintf(full, sizeof full, "Memset (%s)", mk);
					name = full;
				}
			}
		}
		len = strlen(name);
		if ((ret = cvc_db_intern(n->db, name, len, &a.name_id)) ||
		    (ret = cvc_db_activity_add(n->db, &a, NULL))) {
			if (ret == CVC_ERR_FORMAT) {
				char why[512];

				snprintf(why, sizeof why, "%s", cvc_db_errmsg(n->db));
				ret = cvc_db_fail(n->db, ret, "'%s': table %s, rowid %lld: %s", n->path,
						  t, row, why);
			}
			goto out;
		}
		n->acts++;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(n);
out:
	sqlite3_finalize(st);
	return ret;
}

/* The event type id named `name` in ENUM_NSYS_EVENT_TYPE, else `dflt`. */
static cvc_status event_type(struct nsys *n, int have_enum, const char *name, int dflt,
			     int *out)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*out = dflt;
	if (!have_enum)
		return CVC_OK;
	if (sqlite3_prepare_v2(n->src, "SELECT id FROM ENUM_NSYS_EVENT_TYPE WHERE name=?", -1,
			       &st, NULL) != SQLITE_OK)
		return src_fail(n);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return src_fail(n);
	return CVC_OK;
}

static const char *domain_name(const struct nsys *n, int64_t id)
{
	for (size_t i = 0; i < n->ndomains; i++)
		if (n->domains[i].id == id)
			return n->domains[i].name;
	return NULL;
}

/* Text of an NVTX row: inline text, else the StringIds entry of textId.
 * An empty text beside a textId is the default an export of the era that
 * declared every field NOT NULL wrote for a missing one. */
static const char *nvtx_text_expr(int has_text, int has_textid)
{
	if (has_text && has_textid)
		return "coalesce(nullif(e.text, ''), s.value)";
	if (has_text)
		return "e.text";
	if (has_textid)
		return "s.value";
	return "NULL";
}

static cvc_status import_nvtx(struct nsys *n, int have_strings)
{
	struct sqlbuf b = {.len = 0};
	sqlite3_stmt *st = NULL;
	int have_enum, t_pp, t_se, t_dom, has_text, has_textid, has_dom, has_end, has_tid, rc;
	const char *text;
	cvc_status ret = CVC_OK;

	if ((have_enum = cvc_db_sqlite_has_table(n->src, "ENUM_NSYS_EVENT_TYPE")) < 0)
		return src_fail(n);
	if ((ret = event_type(n, have_enum, "NvtxPushPopRange", 59, &t_pp)) ||
	    (ret = event_type(n, have_enum, "NvtxStartEndRange", 60, &t_se)) ||
	    (ret = event_type(n, have_enum, "NvtxDomainCreate", 75, &t_dom)))
		return ret;
	if ((has_text = has_column(n, "NVTX_EVENTS", "text")) < 0 ||
	    (has_textid = has_column(n, "NVTX_EVENTS", "textId")) < 0 ||
	    (has_dom = has_column(n, "NVTX_EVENTS", "domainId")) < 0 ||
	    (has_end = has_column(n, "NVTX_EVENTS", "end")) < 0 ||
	    (has_tid = has_column(n, "NVTX_EVENTS", "globalTid")) < 0)
		return src_fail(n);
	if (!has_end || !has_tid)
		return CVC_OK;
	has_textid = has_textid && have_strings;
	text = nvtx_text_expr(has_text, has_textid);

	/* Domain names first: few rows, kept in memory, bounded. */
	if (has_dom) {
		char sql[512];

		snprintf(sql, sizeof sql,
			 "SELECT e.domainId, %s FROM NVTX_EVENTS e%s WHERE e.eventType=%d",
			 text, has_textid ? " LEFT JOIN StringIds s ON s.id=e.textId" : "", t_dom);
		if (sqlite3_prepare_v2(n->src, sql, -1, &st, NULL) != SQLITE_OK)
			return src_fail(n);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *v = (const char *)sqlite3_column_text(st, 1);
			struct nsys_domain *nd;

			n->rows++;
			if (!v || sqlite3_column_type(st, 0) == SQLITE_NULL)
				continue;
			if (n->ndomains == NSYS_MAX_DOMAINS) {
				ret = cvc_db_fail(n->db, CVC_ERR_FORMAT,
						  "'%s': more than %d NVTX domains", n->path,
						  NSYS_MAX_DOMAINS);
				goto out;
			}
			nd = realloc(n->domains, (n->ndomains + 1) * sizeof *nd);
			if (!nd) {
				ret = cvc_db_fail(n->db, CVC_ERR_NOMEM, "out of memory");
				goto out;
			}
			n->domains = nd;
			nd[n->ndomains].id = sqlite3_column_int64(st, 0);
			nd[n->ndomains].name = strdup(v);
			if (!nd[n->ndomains].name) {
				ret = cvc_db_fail(n->db, CVC_ERR_NOMEM, "out of memory");
				goto out;
			}
			n->ndomains++;
		}
		if (rc != SQLITE_DONE) {
			ret = src_fail(n);
			goto out;
		}
		sqlite3_finalize(st);
		st = NULL;
	}

	sb_add(&b, "SELECT e.start, e.\"end\", e.globalTid, %s, %s, e.rowid FROM NVTX_EVENTS e",
	       text, has_dom ? "e.domainId" : "NULL");
	if (has_textid)
		sb_add(&b, " LEFT JOIN StringIds s ON s.id=e.textId", "", "");
	{
		char where[128];

		snprintf(where, sizeof where,
			 " WHERE e.eventType IN (%d, %d) AND e.\"end\" IS NOT NULL", t_pp, t_se);
		sb_add(&b, "%s", where, "");
	}
	if (b.overflow)
		return cvc_db_fail(n->db, CVC_ERR_INTERNAL, "nsys: statement too long");
	if (sqlite3_prepare_v2(n->src, b.s, -1, &st, NULL) != SQLITE_OK)
		return src_fail(n);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		cvc_range r = {.run_id = n->run_id, .device = -1, .kind = CVC_RANGE_NVTX};
		int64_t gtid = sqlite3_column_int64(st, 2);
		const char *name = (const char *)sqlite3_column_text(st, 3);

		n->rows++;
		progress(n);
		r.rank = proc_rank(n, NSYS_PROC_OF(gtid));
		if (r.rank < 0) {
			/* No GPU work in that process, so no rank to hang it on. */
			n->nvtx_orphans++;
			continue;
		}
		r.start_ns = sqlite3_column_int64(st, 0);
		r.end_ns = sqlite3_column_int64(st, 1);
		if (r.end_ns < r.start_ns) {
			ret = cvc_db_fail(n->db, CVC_ERR_FORMAT,
					  "'%s': table NVTX_EVENTS, rowid %lld: expected start <= end",
					  n->path, (long long)sqlite3_column_int64(st, 5));
			goto out;
		}
		r.tid = gtid & 0xFFFFFF;
		if (sqlite3_column_type(st, 4) != SQLITE_NULL)
			r.domain = domain_name(n, sqlite3_column_int64(st, 4));
		if (!name)
			name = "(unnamed range)";
		if ((ret = cvc_db_intern(n->db, name, strlen(name), &r.name_id)) ||
		    (ret = cvc_db_range_add(n->db, &r)))
			goto out;
		n->ranges++;
	}
	if (rc != SQLITE_DONE)
		ret = src_fail(n);
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * A truncated copy of an export can still open and even answer the first
 * queries; compare the page count in the header with the file's size so it
 * fails up front with a byte position instead of half-way through.
 */
static cvc_status check_header(cvc_db *db, const char *user_path, const char *file)
{
	unsigned char h[100];
	struct stat sb;
	FILE *f = fopen(file, "rb");
	size_t got;
	uint32_t page, npages, change, valid_for;

	if (!f) {
		int e = errno;

		return cvc_db_fail(db, cvc_open_status(e), "'%s': cannot open: %s", user_path,
				   strerror(e));
	}
	got = fread(h, 1, sizeof h, f);
	if (fstat(fileno(f), &sb) != 0)
		sb.st_size = 0;
	fclose(f);
	if (got < sizeof h || memcmp(h, "SQLite format 3", 16) != 0)
		return cvc_db_fail(db, CVC_ERR_FORMAT,
				   "'%s': byte %zu: expected an SQLite database header", user_path,
				   got);
	page = (uint32_t)h[16] << 8 | h[17];
	if (page == 1)
		page = 65536;
	npages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
	change = (uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27];
	valid_for = (uint32_t)h[92] << 24 | (uint32_t)h[93] << 16 | (uint32_t)h[94] << 8 | h[95];
	/* The in-header size is only meaningful when valid-for matches (sqlite docs). */
	if (change == valid_for && npages > 0 &&
	    (int64_t)sb.st_size < (int64_t)page * npages)
		return cvc_db_fail(db, CVC_ERR_FORMAT,
				   "'%s': byte %lld: truncated SQLite file, header says %lld bytes",
				   user_path, (long long)sb.st_size,
				   (long long)page * npages);
	return CVC_OK;
}

cvc_status cvc_import_nsys(cvc_db *db, int64_t run_id, const char *path,
			   const cvc_import_opts *opts, cvc_import_stats *stats)
{
	struct nsys n = {.db = db, .run_id = run_id, .path = path, .opts = opts};
	char *tmp = NULL;
	const char *meta = NULL, *file;
	char schema[64], product[64], tool[160];
	int have_act[N_ACT_TABLES], have_strings, have_nvtx, any_act = 0, h;
	cvc_run_info ri = {0};
	cvc_status ret;

	if ((ret = imp_gunzip_temp(db, path, &tmp)))
		return ret;
	file = tmp ? tmp : imp_open_name(path);
	if ((ret = check_header(db, path, file)))
		goto out;
	if (sqlite3_open_v2(file, &n.src, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		ret = n.src ? src_fail(&n)
			    : cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory opening '%s'", path);
		goto out;
	}
	if ((ret = imp_foreign_check(db, n.src, path)))
		goto out;
	if ((have_strings = cvc_db_sqlite_has_table(n.src, "StringIds")) < 0) {
		ret = src_fail(&n);
		goto out;
	}
	for (int i = 0; i < N_ACT_TABLES; i++) {
		if ((have_act[i] = cvc_db_sqlite_has_table(n.src, act_tables[i])) < 0) {
			ret = src_fail(&n);
			goto out;
		}
		any_act |= have_act[i];
	}
	if ((h = cvc_db_sqlite_has_table(n.src, "META_DATA_EXPORT")) < 0) {
		ret = src_fail(&n);
		goto out;
	}
	if (h) {
		meta = "META_DATA_EXPORT";
	} else {
		if ((h = cvc_db_sqlite_has_table(n.src, "EXPORT_META_DATA")) < 0) {
			ret = src_fail(&n);
			goto out;
		}
		if (h)
			meta = "EXPORT_META_DATA";
	}
	if (!have_strings && !any_act) {
		ret = cvc_db_fail(db, CVC_ERR_FORMAT,
				  "'%s': not an Nsight Systems export: table "
				  "CUPTI_ACTIVITY_KIND_KERNEL (and StringIds) missing",
				  path);
		goto out;
	}
	if (have_act[0] && !have_strings) {
		ret = cvc_db_fail(db, CVC_ERR_FORMAT,
				  "'%s': table StringIds missing: kernel names cannot be "
				  "resolved", path);
		goto out;
	}
	if ((ret = meta_value(&n, meta, "EXPORT_SCHEMA_VERSION", schema, sizeof schema)) ||
	    (ret = meta_value(&n, meta, "EXPORT_PRODUCT_VERSION", product, sizeof product)))
		goto out;
	if ((have_nvtx = cvc_db_sqlite_has_table(n.src, "NVTX_EVENTS")) < 0) {
		ret = src_fail(&n);
		goto out;
	}
	if (opts && opts->progress && (ret = count_rows(&n, have_act, have_nvtx)))
		goto out;
	imp_nsys_session(n.src, have_act[0], &n.sess);
	if ((ret = find_ranks(&n, have_act)))
		goto out;
	if (imp_nsys_launch_table(n.src, &n.have_launch)) {
		ret = src_fail(&n);
		goto out;
	}
	for (int i = 0; i < N_ACT_TABLES; i++)
		if (have_act[i] && (ret = import_activities(&n, i)))
			goto out;
	if (have_nvtx && (ret = import_nvtx(&n, have_strings)))
		goto out;

	snprintf(tool, sizeof tool, "nsys export schema %s", schema[0] ? schema : "unknown");
	ri.format = "nsys";
	ri.source = path;
	ri.tool_version = tool;
	ri.gpu_model = n.gpu_model;
	ri.world_size = n.sess.env.world > 0 ? n.sess.env.world : 0;
	if ((ret = cvc_db_run_merge(db, run_id, &ri)))
		goto out;
	if (product[0] &&
	    (ret = imp_meta_per_file(db, run_id, "nsys.product_version", path, product)))
		goto out;
	if ((ret = imp_nsys_notes(db, run_id, path, n.src, n.dups)))
		goto out;
	/* Ranks were numbered by us, not named by the file: a shard merge may renumber. */
	if (n.nprocs && !n.env_rank_used &&
	    (ret = cvc_db_run_meta_set(db, run_id, "import.auto_rank", "1")))
		goto out;
	if (n.untimed && (ret = cvc_db_run_meta_add(db, run_id, "untimed_records", n.untimed)))
		goto out;
	if (n.nvtx_orphans &&
	    (ret = cvc_db_run_meta_add(db, run_id, "nsys.nvtx_ranges_without_gpu_process",
				       n.nvtx_orphans)))
		goto out;
	if ((ret = cvc_db_source_add(db, run_id, path, "nsys",
				     n.nprocs == 1 ? n.procs[0].rank : -1, n.rows, NULL)))
		goto out;
	if (stats) {
		stats->events += n.rows;
		stats->activities += n.acts;
		stats->ranges += n.ranges;
	}
	imp_progress(opts, path, n.rows, n.rows);
out:
	if (n.src)
		sqlite3_close(n.src);
	if (tmp) {
		unlink(tmp);
		cvc_tmp_forget(tmp);
		free(tmp);
	}
	for (size_t i = 0; i < n.ndomains; i++)
		free(n.domains[i].name);
	free(n.domains);
	free(n.procs);
	free(n.gpu_model);
	return ret;
}
