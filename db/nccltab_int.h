/*
 * nccltab_int.h - between the nccl-tests log reader (nccltab.c), what it
 * decides after the last line (ntinfer.c), and the reader of the JSON file
 * nccl-tests writes with -J (ntjson.c, over the byte scan of ntjsonscan.c),
 * which shares the text reader's words for operations, types and versions.
 */
#ifndef CVC_DB_NCCLTAB_INT_H
#define CVC_DB_NCCLTAB_INT_H

#include <stddef.h>
#include <stdint.h>

#include <zlib.h>

#include "cvc/cvc_nccltab.h"

#define NT_MAX_RANKS (1 << 20)
#define NT_MAX_HOSTS 256

/* Evidence seen on the way. */
struct nt_info {
	char op_footer[64], op_cmd[64];
	int nranks_lines, max_rank;
	int nthread, ngpus;          /* "# nThread 1 nGpus 1 ..." */
	int cmd_g, cmd_t, cmd_np;    /* -g / -t of the binary, launcher -np */
	int cmd_pernode, cmd_nodes;  /* launcher ranks per node, nodes */
	char hosts[NT_MAX_HOSTS][64];
	int nhosts, hosts_full;
	double busbw_sum, algbw_sum; /* rows with algbw >= 1 */
	int ratio_rows;
	char first_redop[16];
	int first_root, have_first;
	int banner;                  /* a line only nccl-tests prints */
	int footer;                  /* "# Avg bus bandwidth" and its kin: the sweep ended */
	int64_t max_bytes;           /* the header's maxBytes, 0 unknown */
	long long prose;             /* text lines that are neither '#' nor rows */
};

/* "<op>_perf" in s as a word: 1 and the op copied, else 0. */
int nt_find_op(const char *s, char *op, size_t cap);

/* nccl-tests' bus bandwidth factor of test op at n ranks (its src/<op>.cu
 * GetBw), one table for the text and the JSON reader; -1 for a test cvc
 * does not list (alltoallv's factor is its own). */
double nt_bus_factor(const char *op, int n);
/* The op a binary's path names: a known one, else its name without
 * directory and "_perf" (a test cvc does not list). */
void nt_banner_op(const char *b, char *op, size_t cap);
/* 1 when w is a data type nccl-tests prints. */
int nt_known_type(const char *w);
/* NCCL's version code (21805) as "2.18.5" into out; nothing when v <= 0. */
void nt_nccl_code(int64_t v, char *out, size_t cap);
/* NCCL_ALGO's value where s sets it ("NCCL_ALGO=Ring", NCCL's INFO line). */
void nt_algo_of(const char *s, char *algo, size_t cap);

/* What nt_json_scan() found in the bytes of a -J file. */
struct nt_json_scan {
	int object;          /* the first byte that is not blank is '{' */
	int header;          /* 2: the first two top-level keys are util.cu's "version", "start_time" */
	int has_config, has_results, has_footer, has_trace_events; /* top-level keys seen */
	int closed;          /* the top-level object ends, at end */
	size_t end;
	int results_closed;  /* the results list ends */
	size_t cut;          /* the byte after the last whole result, or the list's ']'; 0 none */
	long long nresults;  /* whole results */
};

/* Scans text[0..n) (see ntjsonscan.c): exact on text json-c accepts. */
void nt_json_scan(const char *text, size_t n, struct nt_json_scan *sc);

/*
 * Reads the -J file gz is open on, from its first byte, into log (zeroed
 * by the caller) as cvc_nt_read() does for a log.  CVC_ERR_NOTFOUND when
 * the JSON is not one nccl-tests wrote.
 */
cvc_status nt_json_read(gzFile gz, const char *name, cvc_nt_log *log,
			void (*progress)(void *arg, long long bytes), void *arg, char *err,
			size_t errlen);

/* The operation from the bandwidth ratio, when no line names it. */
void nt_infer_op(const struct nt_info *in, cvc_nt_log *log);
/* The rank count, and the ranks per node, from the evidence. */
void nt_decide_ranks(const struct nt_info *in, cvc_nt_log *log);
void nt_decide_per_node(const struct nt_info *in, cvc_nt_log *log);

#endif
