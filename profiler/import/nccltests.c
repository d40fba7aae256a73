/*
 * nccltests.c - nccl-tests (`*_perf`) logs into the nccl_tests table.
 *
 * The log, or the JSON nccl-tests writes with -J, is read by the one
 * nccl-tests reader (db/nccltab.c, db/ntjson.c), which `cvc fit` uses on
 * files too; this file stores its rows and the evidence
 * behind what the log did not print (operation, rank count, GPUs per node)
 * as run metadata, keyed by the file's name.
 */
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_import.h"
#include "cvc/cvc_nccltab.h"
#include "import_int.h"

struct prog {
	const cvc_import_opts *opts;
	const char *path;
};

static void on_bytes(void *arg, long long bytes)
{
	const struct prog *p = arg;

	imp_progress(p->opts, p->path, bytes, 0);
}

cvc_status cvc_import_nccl_tests(cvc_db *db, int64_t run_id, const char *path,
				 const cvc_import_opts *opts, cvc_import_stats *stats)
{
	cvc_nt_log log;
	struct prog prog = {opts, path};
	char err[1024], tool[64];
	cvc_run_info ri = {0};
	int64_t nrows = 0;
	cvc_status st;

	/* a pipe is read from its private copy (stream.c) */
	st = cvc_nt_read(imp_open_name(path), path, &log, on_bytes, &prog, err, sizeof err);
	if (st) {
		st = cvc_db_fail(db, st == CVC_ERR_NOTFOUND ? CVC_ERR_FORMAT : st, "%s", err);
		goto out;
	}
	for (size_t i = 0; i < log.nrows; i++) {
		const cvc_nt_row *r = &log.rows[i];

		for (int h = 0; h < r->nhalf; h++) {
			cvc_nccltest_row row = {
				.run_id = run_id, .op = log.op, .nranks = log.nranks,
				.size_bytes = r->size, .count = r->count,
				.dtype = r->type[0] ? r->type : NULL,
				.redop = r->redop[0] ? r->redop : NULL, .root = (int)r->root,
				.in_place = r->in_place_only ? 1 : h, .time_us = r->time[h], .algbw_gbps = r->algbw[h],
				.busbw_gbps = r->busbw[h], .wrong = r->wrong[h],
				.gpus_per_node = log.gpus_per_node, .algo = log.algo
			};

			if ((st = cvc_db_nccltest_add(db, &row)))
				goto out;
			nrows++;
		}
	}

	ri.format = "nccl-tests";
	ri.source = path;
	if (log.tests_version[0]) {
		snprintf(tool, sizeof tool, "nccl-tests %s", log.tests_version);
		ri.tool_version = tool;
	} else {
		ri.tool_version = "nccl-tests";
	}
	ri.gpu_model = log.gpu[0] ? log.gpu : NULL;
	ri.nccl_version = log.nccl_version[0] ? log.nccl_version : NULL;
	if ((st = cvc_db_run_merge(db, run_id, &ri)) ||
	    (st = imp_meta_per_file(db, run_id, "nccl_tests.op", path, log.op)) ||
	    (st = imp_meta_per_file(db, run_id, "nccl_tests.op_evidence", path,
				    log.op_evidence)) ||
	    (st = imp_meta_per_file(db, run_id, "nccl_tests.nranks_evidence", path,
				    log.nranks_evidence)) ||
	    (st = imp_meta_per_file(db, run_id, "nccl_tests.gpus_per_node_evidence", path,
				    log.pn_evidence)) ||
	    (log.algo[0] &&
	     (st = imp_meta_per_file(db, run_id, "nccl_tests.algo", path, log.algo))) ||
	    (log.incomplete[0] && (st = imp_meta_per_file(db, run_id, "nccl_tests.incomplete",
							  path, log.incomplete))) ||
	    (st = cvc_db_source_add(db, run_id, path, "nccl-tests", -1, (int64_t)log.nrows, NULL)))
		goto out;
	if (stats) {
		stats->events += (int64_t)log.nrows;
		stats->nccl_rows += nrows;
	}
out:
	cvc_nt_log_release(&log);
	return st;
}
