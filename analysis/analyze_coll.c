/*
 * analyze_coll.c - per-collective statistics: count, size, time, and the
 * nccl-tests algorithm and bus bandwidths (see cvc_analyze.h for the size
 * convention).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_analyze.h"
#include "cvc/cvc_vocab.h"
#include "analysis/analyze_int.h"


/* Maps the trace's word for a collective to the nccl-tests family. */
static void coll_family(const char *word, char *out, size_t cap)
{
	static const struct {
		const char *key, *family;
	} t[] = {
		/* Order matters: "reducescatter" before "reduce" and "scatter",
		 * "allgather" before "gather". */
		{"allreduce", "allreduce"}, {"reducescatter", "reducescatter"},
		{"allgather", "allgather"}, {"alltoall", "alltoall"},
		{"broadcast", "broadcast"}, {"sendrecv", "sendrecv"},
		{"send", "sendrecv"}, {"recv", "sendrecv"}, {"reduce", "reduce"},
		{"gather", "gather"}, {"scatter", "scatter"},
	};
	char k[64];
	const char *pick;
	size_t len;

	cvc_name_fold(word, k, sizeof k);
	pick = k[0] ? k : "unknown";
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strstr(k, t[i].key)) {
			pick = t[i].family;
			break;
		}
	len = strlen(pick);
	if (len >= cap)
		len = cap - 1;
	memcpy(out, pick, len);
	out[len] = '\0';
}

double cvc_busbw_factor(const char *coll, int n)
{
	char f[32];
	cvc_model_coll c;

	/* the family names are the vocabulary's collective names: one table
	 * of factors (cvc_model_busbw_factor) serves both */
	coll_family(coll, f, sizeof f);
	/* no operator model prices a gather or a scatter, but nccl-tests
	 * gives both a bus bandwidth: (n-1)/n (src/gather.cu, scatter.cu) */
	if (strcmp(f, "gather") == 0 || strcmp(f, "scatter") == 0)
		return n > 0 ? (double)(n - 1) / n : NAN;
	if (cvc_model_coll_parse(f, &c))
		return NAN;
	if (n <= 0 && c != CVC_MODEL_BROADCAST && c != CVC_MODEL_REDUCE && c != CVC_MODEL_SENDRECV)
		return NAN; /* a factor of n without n */
	return cvc_model_busbw_factor(c, n);
}

struct coll_rec {
	int64_t run_idx;
	int rank;
	char coll[32];
	int64_t bytes;
	int group_size;
	int64_t dur_ns;
};

static int rec_cmp(const void *pa, const void *pb)
{
	const struct coll_rec *a = pa, *b = pb;
	int c;

	if (a->run_idx != b->run_idx)
		return a->run_idx < b->run_idx ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if ((c = strcmp(a->coll, b->coll)))
		return c;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	return (a->group_size > b->group_size) - (a->group_size < b->group_size);
}

static cvc_status load_recs(cvc_db *db, const struct an_run *run, int64_t run_idx,
			    struct coll_rec **recs, size_t *n, size_t *cap)
{
	sqlite3_stmt *st = NULL;
	cvc_status rc = CVC_OK;
	int r;

	/* Sizes from the trace; the type falls back to the kernel name's capture. */
	if (sqlite3_prepare_v2(cvc_db_sqlite(db),
			       "SELECT a.rank, coalesce(c.coll, nc.coll), c.dtype, c.in_nelems, "
			       "c.out_nelems, c.bytes, c.group_size, a.end_ns - a.start_ns "
			       "FROM collectives c JOIN activities a ON a.id = c.activity_id "
			       "LEFT JOIN name_class nc ON nc.name_id = a.name_id "
			       "WHERE a.run_id = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return cvc_db_fail(db, CVC_ERR_DB, "'%s': preparing query: %s",
				   cvc_db_path(db), sqlite3_errmsg(cvc_db_sqlite(db)));
	sqlite3_bind_int64(st, 1, run->id);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct coll_rec c = {0};
		int64_t in = sqlite3_column_type(st, 3) == SQLITE_NULL ? -1
								       : sqlite3_column_int64(st, 3);
		int64_t out = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1
									: sqlite3_column_int64(st, 4);
		int64_t stored = sqlite3_column_type(st, 5) == SQLITE_NULL
					 ? -1
					 : sqlite3_column_int64(st, 5);
		int tsize = cvc_dtype_size((const char *)sqlite3_column_text(st, 2));
		int64_t nel = in > out ? in : out;

		c.run_idx = run_idx;
		c.rank = sqlite3_column_int(st, 0);
		coll_family((const char *)sqlite3_column_text(st, 1), c.coll, sizeof c.coll);
		/* nccl-tests' printed size: max(send, receive) bytes of one rank. */
		if (nel >= 0 && tsize > 0 && nel <= INT64_MAX / tsize)
			c.bytes = nel * tsize;
		else if (stored >= 0)
			c.bytes = stored;
		else
			continue; /* size unknown: nothing to say about bandwidth */
		c.group_size = sqlite3_column_int(st, 6);
		if (c.group_size <= 0)
			c.group_size = run->world_size > 0 ? run->world_size : 0;
		c.dur_ns = sqlite3_column_int64(st, 7);
		if (c.dur_ns < 0)
			c.dur_ns = 0;
		if (*n == *cap) {
			rc = cvc_grow(recs, cap, *cap + 1, sizeof **recs, 256);
			if (rc != CVC_OK)
				goto out;
		}
		(*recs)[(*n)++] = c;
	}
	if (r != SQLITE_DONE)
		rc = cvc_db_fail(db, CVC_ERR_DB, "'%s': reading collectives: %s",
				 cvc_db_path(db), sqlite3_errmsg(cvc_db_sqlite(db)));
out:
	sqlite3_finalize(st);
	return rc;
}

cvc_status cvc_analyze_collectives(cvc_db *db, const cvc_analyze_opts *opts,
				   cvc_coll_stat **rows, size_t *nrows)
{
	struct an_run *runs = NULL;
	size_t nruns = 0, n = 0, cap = 0, nout = 0;
	struct coll_rec *recs = NULL;
	cvc_coll_stat *out = NULL;
	cvc_status rc;

	*rows = NULL;
	*nrows = 0;
	if ((rc = an_runs_load(db, opts ? opts->run : NULL, &runs, &nruns)))
		goto out;
	for (size_t i = 0; i < nruns; i++)
		if ((rc = load_recs(db, &runs[i], (int64_t)i, &recs, &n, &cap)))
			goto out;
	if (n == 0)
		goto out;
	qsort(recs, n, sizeof *recs, rec_cmp);
	out = calloc(n, sizeof *out);
	if (!out) {
		rc = CVC_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < n;) {
		cvc_coll_stat *s = &out[nout++];
		const struct an_run *run = &runs[recs[i].run_idx];
		size_t j = i;
		an_u128 total = 0;
		double f;

		snprintf(s->run, sizeof s->run, "%s", run->name);
		s->run_id = run->id;
		s->rank = recs[i].rank;
		snprintf(s->coll, sizeof s->coll, "%s", recs[i].coll);
		s->bytes = recs[i].bytes;
		s->group_size = recs[i].group_size;
		for (; j < n && rec_cmp(&recs[i], &recs[j]) == 0; j++) {
			s->count++;
			total += (uint64_t)recs[j].dur_ns; /* each within 0..2^63 */
		}
		if (total > (an_u128)INT64_MAX) {
			rc = cvc_db_fail(db, CVC_ERR_FORMAT,
					 "'%s': run '%s' rank %d: the %s collectives of %lld bytes last "
					 "2^63 ns or more in all (292 years): not a trace's times",
					 cvc_db_path(db), run->name, s->rank, s->coll,
					 (long long)s->bytes);
			goto out;
		}
		s->total_ns = (int64_t)total;
		s->mean_ns = (double)s->total_ns / (double)s->count;
		/* bytes / ns is GB/s with GB = 1e9 bytes, nccl-tests' unit. */
		s->algbw_gbps = s->mean_ns > 0 ? (double)s->bytes / s->mean_ns : NAN;
		f = cvc_busbw_factor(s->coll, s->group_size);
		s->busbw_gbps = s->algbw_gbps * f;
		i = j;
	}
	*rows = out;
	*nrows = nout;
	out = NULL;
out:
	free(out);
	free(recs);
	free(runs);
	return rc;
}
