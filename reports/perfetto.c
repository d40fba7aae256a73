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
static void put_us(FILE *f, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	fprintf(f, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000, a % 1000);
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

cvc_status cvc_rep_perfetto(cvc_db *db, const char *run, FILE *out,
			    cvc_rep_perfetto_stats *stats)
{
	sqlite3 *sq = cvc_db_sqlite(db);
	sqlite3_stmt *q = NULL;
	struct devkey *devs = NULL;
	size_t ndev = 0, capdev = 0;
	int64_t *streams = NULL, run_id = -1, t0 = 0;
	size_t nstreams = 0, capstreams = 0;
	cvc_rep_perfetto_stats s = {0};
	cvc_status st = CVC_OK;
	int rc, first = 1, by_rank = 1, classes = cvc_db_sqlite_has_table(sq, "name_class") == 1;
	int colls = cvc_db_sqlite_has_table(sq, "collectives") == 1;
	char sql[2048];

	if (run) {
		st = cvc_db_run_find(db, run, &run_id);
		if (st == CVC_ERR_NOTFOUND)
			return cvc_db_fail(db, st, "'%s': no run named '%s'", cvc_db_path(db), run);
		if (st)
			return st;
	}
	/* The devices, for pids: pid = rank when that is unambiguous. */
	rc = sqlite3_prepare_v2(sq,
		"SELECT DISTINCT a.run_id, a.rank, a.device, r.name FROM activities a"
		" JOIN runs r ON r.id = a.run_id WHERE ?1 < 0 OR a.run_id = ?1"
		" ORDER BY a.run_id, a.rank, a.device", -1, &q, NULL);
	if (rc != SQLITE_OK) {
		st = fail_sql(db, "listing devices");
		goto out;
	}
	sqlite3_bind_int64(q, 1, run_id);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		if (ndev == capdev) {
			size_t cap = capdev ? capdev * 2 : 16;
			struct devkey *nd = realloc(devs, cap * sizeof *nd);

			if (!nd) {
				st = cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
				goto out;
			}
			devs = nd;
			capdev = cap;
		}
		devs[ndev].run_id = sqlite3_column_int64(q, 0);
		devs[ndev].rank = sqlite3_column_int(q, 1);
		devs[ndev].device = sqlite3_column_int(q, 2);
		snprintf(devs[ndev].run, sizeof devs[ndev].run, "%s",
			 sqlite3_column_text(q, 3) ? (const char *)sqlite3_column_text(q, 3) : "");
		if (ndev && (devs[ndev].run_id != devs[0].run_id ||
			     (devs[ndev].rank == devs[ndev - 1].rank)))
			by_rank = 0;
		ndev++;
	}
	if (rc != SQLITE_DONE) {
		st = fail_sql(db, "listing devices");
		goto out;
	}
	sqlite3_finalize(q);
	q = NULL;
	rc = sqlite3_prepare_v2(sq,
		"SELECT MIN(a.start_ns + COALESCE(k.clock_offset_ns, 0)) FROM activities a"
		" LEFT JOIN ranks k ON k.run_id = a.run_id AND k.rank = a.rank"
		" WHERE ?1 < 0 OR a.run_id = ?1", -1, &q, NULL);
	if (rc != SQLITE_OK) {
		st = fail_sql(db, "reading the first timestamp");
		goto out;
	}
	sqlite3_bind_int64(q, 1, run_id);
	if (sqlite3_step(q) == SQLITE_ROW)
		t0 = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	q = NULL;

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"cvc " CVC_VERSION
	      "\",\"ts_origin_ns\":", out);
	fprintf(out, "%" PRId64 "},\"traceEvents\":[", t0);
	for (size_t i = 0; i < ndev; i++) {
		char name[200];
		int64_t pid = by_rank ? devs[i].rank : (int64_t)i;

		if (ndev > 1 && !by_rank)
			snprintf(name, sizeof name, "%s rank %d GPU %d", devs[i].run, devs[i].rank,
				 devs[i].device);
		else
			snprintf(name, sizeof name, "rank %d GPU %d", devs[i].rank, devs[i].device);
		meta_event(out, &first, "process_name", pid, 0, 0, "name", name, 0);
		meta_event(out, &first, "process_sort_index", pid, 0, 0, "sort_index", NULL,
			   (int64_t)i);
		s.processes++;
	}

	snprintf(sql, sizeof sql,
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
	rc = sqlite3_prepare_v2(sq, sql, -1, &q, NULL);
	if (rc != SQLITE_OK) {
		st = fail_sql(db, "reading activities");
		goto out;
	}
	sqlite3_bind_int64(q, 1, run_id);
	{
		size_t di = 0;
		int64_t cur_pid = -1;

		while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
			int64_t rid = sqlite3_column_int64(q, 0);
			int rank = sqlite3_column_int(q, 1), dev = sqlite3_column_int(q, 2);
			int kind = sqlite3_column_int(q, 3);
			const char *name = (const char *)sqlite3_column_text(q, 4);
			const char *cls = (const char *)sqlite3_column_text(q, 11);
			int is_comm = sqlite3_column_int(q, 12);
			int64_t tid = sqlite3_column_type(q, 7) == SQLITE_NULL ? 0
				      : sqlite3_column_int64(q, 7);
			int64_t pid;
			size_t k;

			while (di < ndev && (devs[di].run_id != rid || devs[di].rank != rank ||
					     devs[di].device != dev))
				di++;
			if (di == ndev) {
				/* Rows come in the order of the device list; anything else is
				   a concurrent writer. */
				st = cvc_db_fail(db, CVC_ERR_DB, "'%s': activities changed while exporting",
						 cvc_db_path(db));
				goto out;
			}
			pid = by_rank ? rank : (int64_t)di;
			if (pid != cur_pid) {
				cur_pid = pid;
				nstreams = 0;
			}
			for (k = 0; k < nstreams && streams[k] != tid; k++)
				;
			if (k == nstreams) {
				char tname[64];

				if (nstreams == capstreams) {
					size_t cap = capstreams ? capstreams * 2 : 16;
					int64_t *ns = realloc(streams, cap * sizeof *ns);

					if (!ns) {
						st = cvc_db_fail(db, CVC_ERR_NOMEM, "out of memory");
						goto out;
					}
					streams = ns;
					capstreams = cap;
				}
				streams[nstreams++] = tid;
				snprintf(tname, sizeof tname, "stream %" PRId64, tid);
				meta_event(out, &first, "thread_name", pid, tid, 1, "name", tname, 0);
				meta_event(out, &first, "thread_sort_index", pid, tid, 1, "sort_index",
					   NULL, tid);
				s.threads++;
			}
			if (!cls && name && strncmp(name, "nccl", 4) == 0)
				is_comm = 1;
			fputs(",\n{\"ph\":\"X\",\"name\":", out);
			rep_json_str(out, name ? name : "", 0);
			fprintf(out, ",\"cat\":\"%s\",\"pid\":%" PRId64 ",\"tid\":%" PRId64 ",\"ts\":",
				kind == 2 ? "gpu_memcpy" : kind == 3 ? "gpu_memset" : "kernel", pid, tid);
			put_us(out, sqlite3_column_int64(q, 5) - t0);
			fputs(",\"dur\":", out);
			put_us(out, sqlite3_column_int64(q, 6));
			fprintf(out, ",\"cname\":\"%s\",\"args\":{\"class\":", cname_for(cls, is_comm, kind));
			rep_json_str(out, cls ? cls : kind == 1 ? "unclassified" : "copy", 0);
			fprintf(out, ",\"comm\":%s", is_comm ? "true" : "false");
			arg_int(out, q, 8, "correlation", 0);
			arg_int(out, q, 9, "external id", 0);
			arg_int(out, q, 7, "stream", INT64_MIN);
			fprintf(out, ",\"device\":%d", dev);
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
			s.events++;
		}
		if (rc != SQLITE_DONE) {
			st = fail_sql(db, "reading activities");
			goto out;
		}
	}
	sqlite3_finalize(q);
	q = NULL;

	/* GPU annotations (ProfilerStep spans) on a track of their own. */
	rc = sqlite3_prepare_v2(sq,
		"SELECT g.run_id, g.rank, g.device, s.value,"
		" g.start_ns + COALESCE(k.clock_offset_ns, 0), g.end_ns - g.start_ns"
		" FROM ranges g JOIN strings s ON s.id = g.name_id"
		" LEFT JOIN ranks k ON k.run_id = g.run_id AND k.rank = g.rank"
		" WHERE g.kind = 2 AND (?1 < 0 OR g.run_id = ?1)"
		" ORDER BY g.run_id, g.rank, g.device, g.start_ns", -1, &q, NULL);
	if (rc != SQLITE_OK) {
		st = fail_sql(db, "reading ranges");
		goto out;
	}
	sqlite3_bind_int64(q, 1, run_id);
	{
		size_t last = (size_t)-1;

		while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
			int64_t rid = sqlite3_column_int64(q, 0);
			int rank = sqlite3_column_int(q, 1), dev = sqlite3_column_int(q, 2);
			size_t di;
			int64_t pid;

			for (di = 0; di < ndev; di++)
				if (devs[di].run_id == rid && devs[di].rank == rank && devs[di].device == dev)
					break;
			if (di == ndev)
				continue; /* a device with no activity has no process */
			pid = by_rank ? rank : (int64_t)di;
			if (di != last) {
				last = di;
				meta_event(out, &first, "thread_name", pid, REP_ANNOT_TID, 1, "name",
					   "GPU annotations", 0);
				meta_event(out, &first, "thread_sort_index", pid, REP_ANNOT_TID, 1,
					   "sort_index", NULL, -1);
				s.threads++;
			}
			fputs(",\n{\"ph\":\"X\",\"name\":", out);
			rep_json_str(out, (const char *)sqlite3_column_text(q, 3), 0);
			fprintf(out, ",\"cat\":\"gpu_user_annotation\",\"pid\":%" PRId64
				",\"tid\":%d,\"ts\":", pid, REP_ANNOT_TID);
			put_us(out, sqlite3_column_int64(q, 4) - t0);
			fputs(",\"dur\":", out);
			put_us(out, sqlite3_column_int64(q, 5));
			fputs(",\"cname\":\"generic_work\",\"args\":{}}", out);
			s.events++;
		}
		if (rc != SQLITE_DONE) {
			st = fail_sql(db, "reading ranges");
			goto out;
		}
	}
	fputs("\n]}\n", out);
	if (fflush(out) != 0 || ferror(out))
		st = cvc_db_fail(db, CVC_ERR_IO, "write failed");
out:
	sqlite3_finalize(q);
	free(devs);
	free(streams);
	if (stats)
		*stats = s;
	return st;
}
