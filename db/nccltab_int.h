/*
 * nccltab_int.h - between the nccl-tests reader (nccltab.c) and what it
 * decides after the last line (ntinfer.c).
 */
#ifndef CVC_DB_NCCLTAB_INT_H
#define CVC_DB_NCCLTAB_INT_H

#include <stdint.h>

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

/* The operation from the bandwidth ratio, when no line names it. */
void nt_infer_op(const struct nt_info *in, cvc_nt_log *log);
/* The rank count, and the ranks per node, from the evidence. */
void nt_decide_ranks(const struct nt_info *in, cvc_nt_log *log);
void nt_decide_per_node(const struct nt_info *in, cvc_nt_log *log);

#endif
