/*
 * cvc_nccltab.h - the one reader of nccl-tests (`*_perf`) logs, for the
 * importer (nccl_tests table) and for `cvc fit` on files alike.
 *
 * A log is read wherever its table sits: plain stdout, gzip, pasted into
 * markdown (quoted, fenced, indented), behind launcher prefixes ("0: " of
 * srun -l, "[1,0]<stdout>:" of mpirun --tag-output, "(head, rank=0, ...)"
 * of SkyPilot, "host: " of pdsh), after any number of text or '#' comment
 * lines.  What the log does not print is inferred and the evidence kept:
 * the operation (binary name, footer, or the busbw/algbw factor), the rank
 * count (device lines, launcher, or busbw/algbw = 2(n-1)/n for all-reduce,
 * (n-1)/n for all-gather, reduce-scatter and all-to-all), GPUs per node
 * (host names of the device lines, launcher options), NCCL_ALGO when the
 * command line forces one.
 *
 * The JSON file nccl-tests (2.17 and later) writes with -J FILE is read
 * into the same log: a top-level object with "config" (threads, GPUs per
 * thread, one device entry per process) and "results".  There the rank
 * count is the device entries x threads x GPUs, the ranks per host the
 * entries of each host name x threads x GPUs, the operation the binary
 * in "args", NCCL_ALGO from "env" or "args"; each result's bus bandwidth
 * must be its algorithm bandwidth times the operation's bus factor at
 * that rank count.
 */
#ifndef CVC_NCCLTAB_H
#define CVC_NCCLTAB_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"

/* One result row: nccl-tests prints out-of-place and in-place halves. */
typedef struct cvc_nt_row {
	int64_t size, count;
	char type[16], redop[16];
	int64_t root;
	int nhalf;                 /* 1 or 2 blocks of time/algbw/busbw/wrong */
	double time[2], algbw[2], busbw[2];
	int64_t wrong[2];          /* -1 = N/A */
	int in_place_only;         /* the one half is in-place (-J: out_of_place null) */
	long long line;            /* 1-based line in the file; -J: result number */
} cvc_nt_row;

typedef struct cvc_nt_log {
	char op[64];               /* all_reduce, all_gather, ... ("unknown") */
	char op_evidence[256];
	int nranks;                /* 0 = unknown */
	char nranks_evidence[256];
	int gpus_per_node;         /* ranks per host; 0 = unknown */
	char pn_evidence[160];
	char gpu[128];             /* device name of the rank lines, "" */
	char tests_version[32], nccl_version[32];
	char algo[32];             /* NCCL_ALGO forced on the command line, "" */
	char incomplete[200];      /* why the run may not have finished its sweep, "" */
	cvc_nt_row *rows;
	size_t nrows, cap;
	long long nlines;          /* lines in the file */
	int json;                  /* read from a -J file: a row's line is its result number */
} cvc_nt_log;

/* Most rows one log may hold (a sweep has tens; this bounds memory). */
#define CVC_NT_MAX_ROWS (1 << 20)

/*
 * Reads the log at open_path (plain or gzip; name is used in messages)
 * into *out (zeroed first; release with cvc_nt_log_release() on success
 * and failure alike).  A file whose first byte that is not blank is '{'
 * is read as nccl-tests' -J JSON.  progress (may be NULL) is called every
 * few thousand lines with the (uncompressed) bytes read so far.  Returns
 * CVC_OK; CVC_ERR_IO "'name': cannot open: ..."; CVC_ERR_FORMAT "'name':
 * line N: expected ..." for a malformed row (wrong column count, a column
 * that is not a number), a table header with no result rows, or more than
 * CVC_NT_MAX_ROWS; for a -J file "'name': byte N: ..." for JSON json-c
 * cannot parse, "'name': result N: ..." for a result of the wrong shape
 * or whose bus bandwidth does not fit the rank count (a file cut short is
 * read up to its last whole result, and out->incomplete says so);
 * CVC_ERR_NOTFOUND (same message) when no table header is found at all
 * (not an nccl-tests log, or JSON without "config" and "results");
 * CVC_ERR_NOMEM.
 */
CVC_API cvc_status cvc_nt_read(const char *open_path, const char *name, cvc_nt_log *out,
			       void (*progress)(void *arg, long long bytes), void *arg,
			       char *err, size_t errlen);

/*
 * 1 when buf[0..n), a file's first bytes, starts an nccl-tests -J file: a
 * JSON object with the top-level keys "config" and "results", or, when the
 * object goes on past n, whose first keys are "version" and "start_time"
 * as nccl-tests writes them (a long environment or device list puts the
 * others further on).  Never one with "traceEvents" (Kineto).  buf may be
 * NULL (0).
 */
CVC_API int cvc_nt_json_sniff(const void *buf, size_t n);

/* Frees what cvc_nt_read() allocated and zeroes log.  Accepts NULL. */
CVC_API void cvc_nt_log_release(cvc_nt_log *log);

/*
 * The rank count n whose nccl-tests bus bandwidth factor for op (2(n-1)/n
 * all_reduce; (n-1)/n all_gather, reduce_scatter, alltoall, gather,
 * scatter) is ratio, when
 * ratio, known to rel_tol, pins exactly one n in 2..2^20; else 0.
 */
CVC_API int cvc_nt_ranks_from_ratio(const char *op, double ratio, double rel_tol);

#endif
