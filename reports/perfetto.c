/*
 * perfetto.c - the database's device timeline as Chrome trace JSON, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing open.  Streamed: one
 * ordered read of the activities index, one event printed per row, so the
 * memory does not grow with the trace.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "rep_int.h"

/* tid of the GPU annotation track (ProfilerStep spans): above any stream. */
#define REP_ANNOT_TID 1000000

struct devkey {
	int64_t run_id;
	int rank, device;
	char run[128];
};

/*
 * Chrome's reserved colour names (trace-viewer's color_scheme.js): the
 * only values "cname" may take.  Communication stands out in red.
 */
static const char *cname_for(const char *cls, int is_comm, int kind)
{
	static const struct {
		const char *cls, *cname;
	} map[] = {
		{"gemm", "thread_state_running"}, {"attention", "rail_animation"},
		{"conv", "rail_load"},            {"norm", "rail_idle"},
		{"softmax", "rail_idle"},         {"elementwise", "thread_state_runnable"},
		{"reduction", "thread_state_runnable"}, {"optimizer", "startup"},
		{"embedding", "olive"},           {"copy", "grey"},
		{"sendrecv", "bad"},              {"alltoall", "bad"},
	};

	if (kind == 2 || kind == 3)
		return "grey";
	for (size_t i = 0; cls && i < sizeof map / sizeof map[0]; i++)
		if (strcmp(cls, map[i].cls) == 0)
			return map[i].cname;
	return is_comm ? "terrible" : "generic_work";
}

/* ns as microseconds with 3 decimals, exactly (no double rounding). */
/* b - a in microseconds with three decimals, exact for any int64 times:
 * aligned times (a time plus its rank's clock offset, each within
 * CVC_TIME_LIMIT_NS) may lie further apart than an int64 holds. */
static void put_us_diff(FILE *f, int64_t a, int64_t b)
{
	uint64_t d = b >= a ? (uint64_t)b - (uint64_t)a : (uint64_t)a - (uint64_t)b;

	fprintf(f, "%s%" PRIu64 ".%03" PRIu64, b < a ? "-" : "", d / 1000, d % 1000);
}

static cvc_status fail_sql(cvc_db *db, const char *what)
{
	return cvc_db_fail(db, CVC_ERR_DB, "'%s': %s: %s", cvc_db_path(db), what,
			   sqlite3_errmsg(cvc_db_sqlite(db)));
}

static void meta_event(FILE *f, int *first, const char *what, int64_t pid, int64_t tid,
		       int use_tid, const char *key, const char *sval, int64_t ival)
{
	fputs(*first ? "\n" : ",\n", f);
	*first = 0;
	fprintf(f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId64, what, pid);
	if (use_tid)
		fprintf(f, ",\"tid\":%" PRId64, tid);
	fprintf(f, ",\"args\":{\"%s\":", key);
	if (sval)
		rep_json_str(f, sval, 0);
	else
		fprintf(f, "%" PRId64, ival);
	fputs("}}", f);
}

/* Optional integer column: printed as ,"key":v unless NULL or below lo. */
static void arg_int(FILE *f, sqlite3_stmt *q, int c, const char *key, int64_t lo)
{
	if (sqlite3_column_type(q, c) == SQLITE_NULL || sqlite3_column_int64(q, c) < lo)
		return;
	fprintf(f, ",\"%s\":%" PRId64, key, (int64_t)sqlite3_column_int64(q, c));
}

static void arg_str(FILE *f, sqlite3_stmt *q, int c, const char *key)
{
	const char *s = (const char *)sqlite3_column_text(q, c);

	if (!s || !*s)
		return;
	fprintf(f, ",\"%s\":", key);
	rep_json_str(f, s, 0);
}

/*
 * The export's state: the device list (one pid each), the streams of the
 * current pid (one tid each) and what has been written so far.
 */
struct pf {
	cvc_db *db;
	sqlite3 *sq;
	FILE *out;
	int64_t run_id;         /* < 0: every run */
	int64_t t0;             /* earliest activity, clock offsets applied */
	struct devkey *devs;
	size_t ndev, capdev;
	int by_rank;            /* pid = rank (unambiguous), else the device index */
	int64_t *streams;       /* tids of the current pid that have their names */
	size_t nstreams, capstreams;
	size_t di;              /* activities: device of the current row */
	int64_t cur_pid;        /* activities: pid of the current row, -1 before */
	size_t annot_di;        /* annotations: device whose track is named, -1 before */
	int first;              /* no event written yet: no comma before the next */
	cvc_rep_perfetto_stats s;
};

/* Prepares sql with ?1 bound to the run filter. */
static cvc_status prepare(struct pf *x, const char *sql, const char *what, sqlite3_stmt **q)
{
	if (sqlite3_prepare_v2(x->sq, sql, -1, q, NULL) != SQLITE_OK)
		return fail_sql(x->db, what);
	sqlite3_bind_int64(*q, 1, x->run_id);
	return CVC_OK;
}

/* The devices, for pids: pid = rank when that is unambiguous. */
static cvc_status device_row(struct pf *x, sqlite3_stmt *q)
{
	const char *run = (const char *)sqlite3_column_text(q, 3);
	struct devkey *d;

	if (cvc_grow(&x->devs, &x->capdev, x->ndev + 1, sizeof *x->devs, 16))
		return cvc_db_fail(x->db, CVC_ERR_NOMEM, "out of memory");
	d = &x->devs[x->ndev];
	d->run_id = sqlite3_column_int64(q, 0);
	d->rank = sqlite3_column_int(q, 1);
	d->device = sqlite3_column_int(q, 2);
	snprintf(d->run, sizeof d->run, "%s", run ? run : "");
	if (x->ndev && (d->run_id != x->devs[0].run_id || d->rank == d[-1].rank))
		x->by_rank = 0;
	x->ndev++;
	return CVC_OK;
}

static cvc_status first_timestamp(struct pf *x)
{
	sqlite3_stmt *q = NULL;
	cvc_status st;

	st = prepare(x, "SELECT MIN(a.start_ns + COALESCE(k.clock_offset_ns, 0)) FROM activities a"
		     " LEFT JOIN ranks k ON k.run_id = a.run_id AND k.rank = a.rank"
		     " WHERE ?1 < 0 OR a.run_id = ?1", "reading the first timestamp", &q);
	if (!st && sqlite3_step(q) == SQLITE_ROW)
		x->t0 = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return st;
}

/* The file's head and one named, ordered process per device. */
static void write_processes(struct pf *x)
{
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"cvc " CVC_VERSION
	      "\",\"ts_origin_ns\":", x->out);
	fprintf(x->out, "%" PRId64 "},\"traceEvents\":[", x->t0);
	for (size_t i = 0; i < x->ndev; i++) {
		const struct devkey *d = &x->devs[i];
		char name[200];
		int64_t pid = x->by_rank ? d->rank : (int64_t)i;

		if (x->ndev > 1 && !x->by_rank)
			snprintf(name, sizeof name, "%s rank %d GPU %d", d->run, d->rank, d->device);
		else
			snprintf(name, sizeof name, "rank %d GPU %d", d->rank, d->device);
		meta_event(x->out, &x->first, "process_name", pid, 0, 0, "name", name, 0);
		meta_event(x->out, &x->first, "process_sort_index", pid, 0, 0, "sort_index", NULL,
			   (int64_t)i);
		x->s.processes++;
	}
}

/* Names a thread (track) of pid, sorted by sort. */
static void thread_meta(struct pf *x, int64_t pid, int64_t tid, const char *name, int64_t sort)
{
	meta_event(x->out, &x->first, "thread_name", pid, tid, 1, "name", name, 0);
	meta_event(x->out, &x->first, "thread_sort_index", pid, tid, 1, "sort_index", NULL, sort);
	x->s.threads++;
}

/* Names stream tid of pid the first time it is seen; -1 on no memory. */
static int stream_seen(struct pf *x, int64_t pid, int64_t tid)
{
	char tname[64];

	for (size_t k = 0; k < x->nstreams; k++)
		if (x->streams[k] == tid)
			return 0;
	if (cvc_grow(&x->streams, &x->capstreams, x->nstreams + 1, sizeof *x->streams, 16))
		return -1;
	x->streams[x->nstreams++] = tid;
	snprintf(tname, sizeof tname, "stream %" PRId64, tid);
	thread_meta(x, pid, tid, tname, tid);
	return 0;
}

/* Opens an "X" event up to its duration: what both kinds of event share. */
static void x_event_head(struct pf *x, const char *name, const char *cat, int64_t pid,
			 int64_t tid, int64_t start_ns, int64_t dur_ns)
{
	fputs(",\n{\"ph\":\"X\",\"name\":", x->out);
	rep_json_str(x->out, name, 0);
	fprintf(x->out, ",\"cat\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":", cat,
		pid, tid);
	put_us_diff(x->out, x->t0, start_ns);
	fputs(",\"dur\":", x->out);
	put_us_diff(x->out, 0, dur_ns);
}

/* The activities query; the class and collective columns are NULL when
 * their tables are missing (a database nobody classified). */
static void activities_sql(char *sql, size_t len, int classes, int colls)
{
	snprintf(sql, len,
		 "SELECT a.run_id, a.rank, a.device, a.kind, s.value,"
		 " a.start_ns + COALESCE(k.clock_offset_ns, 0), a.end_ns - a.start_ns,"
		 " a.stream, a.correlation, a.external_id, a.bytes, %s, %s,"
		 " %s FROM activities a JOIN strings s ON s.id = a.name_id"
		 " LEFT JOIN ranks k ON k.run_id = a.run_id AND k.rank = a.rank %s %s"
		 " WHERE ?1 < 0 OR a.run_id = ?1 ORDER BY a.run_id, a.rank, a.device, a.start_ns",
		 classes ? "oc.name" : "NULL", classes ? "oc.is_comm" : "NULL",
		 colls ? "c.coll, c.bytes, c.in_nelems, c.out_nelems, c.dtype, c.group_size,"
			 " c.algo, c.proto"
		       : "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
		 classes ? "LEFT JOIN name_class nc ON nc.name_id = a.name_id"
			   " LEFT JOIN op_classes oc ON oc.id = nc.class_id" : "",
		 colls ? "LEFT JOIN collectives c ON c.activity_id = a.id" : "");
}

/* One activity row of the query above as an "X" event of pid. */
static void write_activity(struct pf *x, sqlite3_stmt *q, int64_t pid)
{
	FILE *out = x->out;
	int kind = sqlite3_column_int(q, 3);
	const char *name = (const char *)sqlite3_column_text(q, 4);
	const char *cls = (const char *)sqlite3_column_text(q, 11);
	int is_comm = sqlite3_column_int(q, 12);
	int64_t tid = sqlite3_column_type(q, 7) == SQLITE_NULL ? 0 : sqlite3_column_int64(q, 7);

	if (!cls && name && strncmp(name, "nccl", 4) == 0)
		is_comm = 1;
	x_event_head(x, name ? name : "",
		     kind == 2 ? "gpu_memcpy" : kind == 3 ? "gpu_memset" : "kernel", pid, tid,
		     sqlite3_column_int64(q, 5), sqlite3_column_int64(q, 6));
	fprintf(out, ",\"cname\":\"%s\",\"args\":{\"class\":", cname_for(cls, is_comm, kind));
	rep_json_str(out, cls ? cls : kind == 1 ? "unclassified" : "copy", 0);
	fprintf(out, ",\"comm\":%s", is_comm ? "true" : "false");
	arg_int(out, q, 8, "correlation", 0);
	arg_int(out, q, 9, "external id", 0);
	arg_int(out, q, 7, "stream", INT64_MIN);
	fprintf(out, ",\"device\":%d", sqlite3_column_int(q, 2));
	arg_int(out, q, 10, "bytes", 1);
	arg_str(out, q, 13, "collective");
	arg_int(out, q, 14, "msg bytes", 0);
	arg_int(out, q, 15, "in nelems", 0);
	arg_int(out, q, 16, "out nelems", 0);
	arg_str(out, q, 17, "dtype");
	arg_int(out, q, 18, "group size", 1);
	arg_str(out, q, 19, "algo");
	arg_str(out, q, 20, "proto");
	fputs("}}", out);
	x->s.events++;
}

/* Whether row q (run_id, rank, device in columns 0..2) is on device di. */
static int on_device(const struct pf *x, size_t di, sqlite3_stmt *q)
{
	return x->devs[di].run_id == sqlite3_column_int64(q, 0) &&
	       x->devs[di].rank == sqlite3_column_int(q, 1) &&
	       x->devs[di].device == sqlite3_column_int(q, 2);
}

static int64_t pid_of(const struct pf *x, size_t di)
{
	return x->by_rank ? x->devs[di].rank : (int64_t)di;
}

/* One row of activities_sql(): its stream's name when new, then its event. */
static cvc_status activity_row(struct pf *x, sqlite3_stmt *q)
{
	int64_t pid;

	while (x->di < x->ndev && !on_device(x, x->di, q))
		x->di++;
	if (x->di == x->ndev)
		/* Rows come in the order of the device list; anything else is
		   a concurrent writer. */
		return cvc_db_fail(x->db, CVC_ERR_DB, "'%s': activities changed while exporting",
				   cvc_db_path(x->db));
	pid = pid_of(x, x->di);
	if (pid != x->cur_pid) {
		x->cur_pid = pid;
		x->nstreams = 0;
	}
	if (stream_seen(x, pid, sqlite3_column_type(q, 7) == SQLITE_NULL
				? 0 : sqlite3_column_int64(q, 7)))
		return cvc_db_fail(x->db, CVC_ERR_NOMEM, "out of memory");
	write_activity(x, q, pid);
	return CVC_OK;
}

/* GPU annotations (ProfilerStep spans) on a track of their own. */
static cvc_status annotation_row(struct pf *x, sqlite3_stmt *q)
{
	size_t di;

	for (di = 0; di < x->ndev && !on_device(x, di, q); di++)
		;
	if (di == x->ndev)
		return CVC_OK; /* a device with no activity has no process */
	if (di != x->annot_di) {
		x->annot_di = di;
		thread_meta(x, pid_of(x, di), REP_ANNOT_TID, "GPU annotations", -1);
	}
	x_event_head(x, (const char *)sqlite3_column_text(q, 3), "gpu_user_annotation",
		     pid_of(x, di), REP_ANNOT_TID, sqlite3_column_int64(q, 4),
		     sqlite3_column_int64(q, 5));
	fputs(",\"cname\":\"generic_work\",\"args\":{}}", x->out);
	x->s.events++;
	return CVC_OK;
}

/*
 * Runs sql (?1 bound to the run filter) and hands each row to fn until it
 * fails; what names the query in errors.
 */
static cvc_status each_row(struct pf *x, const char *sql, const char *what,
			   cvc_status (*fn)(struct pf *x, sqlite3_stmt *q))
{
	sqlite3_stmt *q = NULL;
	cvc_status st = prepare(x, sql, what, &q);
	int rc = SQLITE_DONE;

	while (!st && (rc = sqlite3_step(q)) == SQLITE_ROW)
		st = fn(x, q);
	if (!st && rc != SQLITE_DONE)
		st = fail_sql(x->db, what);
	sqlite3_finalize(q);
	return st;
}

cvc_status cvc_rep_perfetto(cvc_db *db, const char *run, FILE *out,
			    cvc_rep_perfetto_stats *stats)
{
	struct pf x = {.db = db, .sq = cvc_db_sqlite(db), .out = out, .run_id = -1,
		       .by_rank = 1, .cur_pid = -1, .annot_di = (size_t)-1, .first = 1};
	cvc_status st = CVC_OK;
	char sql[2048];

	if (run) {
		st = cvc_db_run_find(db, run, &x.run_id);
		if (st == CVC_ERR_NOTFOUND)
			return cvc_db_fail(db, st, "'%s': no run named '%s'", cvc_db_path(db), run);
		if (st)
			return st;
	}
	st = each_row(&x, "SELECT DISTINCT a.run_id, a.rank, a.device, r.name FROM activities a"
		      " JOIN runs r ON r.id = a.run_id WHERE ?1 < 0 OR a.run_id = ?1"
		      " ORDER BY a.run_id, a.rank, a.device", "listing devices", device_row);
	if (st || (st = first_timestamp(&x)))
		goto out;
	write_processes(&x);
	activities_sql(sql, sizeof sql, cvc_db_sqlite_has_table(x.sq, "name_class") == 1,
		       cvc_db_sqlite_has_table(x.sq, "collectives") == 1);
	st = each_row(&x, sql, "reading activities", activity_row);
	if (!st)
		st = each_row(&x, "SELECT g.run_id, g.rank, g.device, s.value,"
			      " g.start_ns + COALESCE(k.clock_offset_ns, 0), g.end_ns - g.start_ns"
			      " FROM ranges g JOIN strings s ON s.id = g.name_id"
			      " LEFT JOIN ranks k ON k.run_id = g.run_id AND k.rank = g.rank"
			      " WHERE g.kind = 2 AND (?1 < 0 OR g.run_id = ?1)"
			      " ORDER BY g.run_id, g.rank, g.device, g.start_ns", "reading ranges",
			      annotation_row);
	if (st)
		goto out;
	fputs("\n]}\n", out);
	if (fflush(out) != 0 || ferror(out))
		st = cvc_db_fail(db, CVC_ERR_IO, "write failed");
out:
	free(x.devs);
	free(x.streams);
	if (stats)
		*stats = x.s;
	return st;
}
