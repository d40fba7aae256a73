/*
 * bench_limits_import.c - imports one Kineto trace from any path, FIFOs
 * included, through cvc_import_kineto() (the CLI's format sniffing reads
 * the file twice, which a FIFO cannot do).  Used by bench/limits.sh.
 * Usage: bench_limits_import DB TRACE
 */
#include <stdio.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_import.h"

int main(int argc, char **argv)
{
	cvc_db *db = NULL;
	cvc_run_info ri = {.name = "limits"};
	cvc_import_stats stats = {0};
	int64_t run = 0;
	cvc_status st;

	if (argc != 3) {
		fputs("usage: bench_limits_import DB TRACE\n", stderr);
		return 2;
	}
	st = cvc_db_open(argv[1], CVC_DB_CREATE, &db);
	if (!st)
		st = cvc_db_begin(db);
	if (!st)
		st = cvc_db_run_new(db, &ri, &run);
	if (!st)
		st = cvc_import_kineto(db, run, argv[2], NULL, &stats);
	if (!st)
		st = cvc_db_commit(db);
	if (st)
		fprintf(stderr, "error: %s\n", db ? cvc_db_errmsg(db) : cvc_strerror(st));
	else
		printf("%lld events, %lld activities\n", (long long)stats.events,
		       (long long)stats.activities);
	cvc_db_close(db);
	return cvc_exit_code(st);
}
