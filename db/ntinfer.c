/*
 * ntinfer.c - what an nccl-tests log does not print, decided from what it
 * does (nccltab.c gathers the evidence): the operation from the bus / algo
 * bandwidth ratio, the rank count from the rank lines, the launcher and
 * that ratio, and the ranks per node from the hosts.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_nccltab.h"
#include "db/nccltab_int.h"

double nt_bus_factor(const char *op, int n)
{
	if (strcmp(op, "all_reduce") == 0)
		return 2.0 * (n - 1) / n;
	if (cvc_str_in_list("all_gather|reduce_scatter|alltoall|gather|scatter", op))
		return (double)(n - 1) / n;
	if (cvc_str_in_list("broadcast|reduce|sendrecv|hypercube", op))
		return 1;
	return -1;
}

/* The factor where it depends on the rank count (the ratio can tell the
 * count), else 0. */
static double factor(const char *op, int n)
{
	return nt_bus_factor(op, 2) != nt_bus_factor(op, 4) ? nt_bus_factor(op, n) : 0;
}

int cvc_nt_ranks_from_ratio(const char *op, double ratio, double rel_tol)
{
	double est;
	int found = 0, lo, hi;

	if (!op || !(ratio > 0) || !(rel_tol >= 0) || factor(op, 2) == 0)
		return 0;
	if (strcmp(op, "all_reduce") == 0)
		est = ratio < 2 ? 2.0 / (2.0 - ratio) : NT_MAX_RANKS;
	else
		est = ratio < 1 ? 1.0 / (1.0 - ratio) : NT_MAX_RANKS;
	if (est < 1.5 || est > NT_MAX_RANKS)
		return 0;
	lo = (int)floor(est) - 2;
	hi = (int)ceil(est) + 2;
	if (lo < 2)
		lo = 2;
	if (hi >= NT_MAX_RANKS)
		hi = NT_MAX_RANKS - 1;
	for (int n = lo; n <= hi; n++) {
		if (fabs(factor(op, n) - ratio) <= rel_tol * ratio) {
			if (found)
				return 0; /* the ratio does not tell n from n + 1 */
			found = n;
		}
	}
	return found;
}

/*
 * How far a log's busbw/algbw may sit from a test's bus factor through
 * printing alone, relative: each printed bandwidth is rounded to 0.01, and
 * the ratio is of the sums over the rows with algbw >= 1.
 */
static double ratio_tol(const struct nt_info *in)
{
	return in->ratio_rows ? 0.01 * in->ratio_rows / in->algbw_sum + 1e-9 : 0;
}

/*
 * The op when no name was printed: the bus bandwidth factor of each test
 * against the measured busbw/algbw (above 1 only all-reduce; below 1
 * all-gather, reduce-scatter, all-to-all; 1 within print rounding the
 * rooted and point-to-point tests), then redop and root.  The gather
 * family's (n - 1)/n is above 0.98 from 50 ranks on, so "near 1" is the
 * rounding's width, not a fixed band.
 */
void nt_infer_op(const struct nt_info *in, cvc_nt_log *log)
{
	double ratio = in->ratio_rows ? in->busbw_sum / in->algbw_sum : 0;
	double one = 2 * ratio_tol(in);
	int reducing = in->have_first && strcmp(in->first_redop, "none") != 0;
	int rooted = in->have_first && in->first_root >= 0;
	const char *op = NULL;

	if (in->ratio_rows && ratio > 1 + one)
		op = "all_reduce";
	else if (in->ratio_rows && ratio > 0.45 && ratio < 1 - one)
		op = reducing ? "reduce_scatter" : "all_gather";
	else if (in->ratio_rows)
		op = rooted ? (reducing ? "reduce" : "broadcast") : "sendrecv";
	else if (rooted)
		op = reducing ? "reduce" : "broadcast";
	else if (in->have_first)
		op = reducing ? "all_reduce" : "all_gather";
	if (!op) {
		snprintf(log->op, sizeof log->op, "unknown");
		snprintf(log->op_evidence, sizeof log->op_evidence, "no evidence");
		return;
	}
	snprintf(log->op, sizeof log->op, "%s", op);
	snprintf(log->op_evidence, sizeof log->op_evidence,
		 "inferred from columns: busbw/algbw %.4f, redop %s, root %d", ratio,
		 in->have_first ? in->first_redop : "?", in->have_first ? in->first_root : -1);
}

/*
 * Whether n ranks could print the log's busbw/algbw: yes where the op has
 * no rank-dependent factor or no row gives a ratio.
 */
static int ratio_admits(const char *op, double ratio, double tol, int ratio_rows, int n)
{
	if (!ratio_rows || factor(op, 2) == 0)
		return 1;
	return fabs(factor(op, n) - ratio) <= tol * ratio;
}

/*
 * The rank count: the printed bandwidth ratio where it names one count;
 * else the device lines or the launcher, whichever the ratio admits.  A
 * pasted log may keep only the first device lines, so a launcher that
 * asked for more ranks (-np) than the lines list wins when the ratio
 * admits it; and "# nThread 1 nGpus 1" without a launcher is one process'
 * GPUs, not the run's, so it counts only where the ratio admits it.
 */
void nt_decide_ranks(const struct nt_info *in, cvc_nt_log *log)
{
	double ratio = in->ratio_rows ? in->busbw_sum / in->algbw_sum : 0;
	double tol = ratio_tol(in);
	int n_ratio = in->ratio_rows ? cvc_nt_ranks_from_ratio(log->op, ratio, tol) : 0;
	int n_lines = 0, n_launch = 0, lines_ok, launch_ok;
	char launch_why[96] = "", lines_why[64] = "no device lines";

	if (in->nranks_lines > 0) {
		n_lines = in->max_rank + 1 > in->nranks_lines ? in->max_rank + 1 : in->nranks_lines;
		snprintf(lines_why, sizeof lines_why, "%d device lines up to rank %d",
			 in->nranks_lines, in->max_rank);
	}
	if (in->ngpus > 0 || in->cmd_g > 0 || in->cmd_np > 0) {
		int g = in->ngpus > 0 ? in->ngpus : (in->cmd_g > 0 ? in->cmd_g : 1);
		int t = in->nthread > 0 ? in->nthread : (in->cmd_t > 0 ? in->cmd_t : 1);
		int procs = in->cmd_np > 0 ? in->cmd_np : 1;

		n_launch = g * t * procs;
		snprintf(launch_why, sizeof launch_why, "%d GPUs x %d threads x %d processes", g, t,
			 procs);
	}
	lines_ok = n_lines > 0 && ratio_admits(log->op, ratio, tol, in->ratio_rows, n_lines);
	launch_ok = n_launch > 0 && ratio_admits(log->op, ratio, tol, in->ratio_rows, n_launch);
	if (n_ratio) {
		log->nranks = n_ratio;
		if (n_lines == n_ratio)
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "%s; busbw/algbw %.4f agrees", lines_why, ratio);
		else
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "busbw/algbw %.4f is the %.20s factor of %d ranks (%s, launcher "
				 "%.80s)", ratio, log->op, n_ratio, lines_why,
				 launch_why[0] ? launch_why : "not printed");
	} else if (launch_ok && (!lines_ok || (in->cmd_np > 0 && n_launch > n_lines))) {
		log->nranks = n_launch;
		if (n_lines)
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "launcher: %s; the %s are a part of them", launch_why, lines_why);
		else
			snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
				 "launcher: %s", launch_why);
	} else if (lines_ok) {
		log->nranks = n_lines;
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence, "%s", lines_why);
	} else if (n_lines && n_launch) {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
			 "unknown: busbw/algbw %.4f fits neither the %s nor the launcher's %.80s",
			 ratio, lines_why, launch_why);
	} else if (n_lines) {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
			 "unknown: busbw/algbw %.4f does not fit the %s", ratio, lines_why);
	} else if (n_launch) {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence,
			 "unknown: busbw/algbw %.4f does not fit %.80s%s", ratio, launch_why,
			 in->cmd_np > 0 ? "" : " (no launcher printed: one process assumed)");
	} else {
		snprintf(log->nranks_evidence, sizeof log->nranks_evidence, "unknown");
	}
}

/* Ranks per host: host names of complete device lines, else the launcher. */
void nt_decide_per_node(const struct nt_info *in, cvc_nt_log *log)
{
	int n = log->nranks;

	if (n <= 0)
		return;
	if (in->nranks_lines == n && in->nhosts > 0 && !in->hosts_full && n % in->nhosts == 0) {
		log->gpus_per_node = n / in->nhosts;
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "%d hosts in the device lines",
			 in->nhosts);
	} else if (in->cmd_pernode > 0 && in->cmd_pernode <= n && n % in->cmd_pernode == 0) {
		log->gpus_per_node = in->cmd_pernode;
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "launcher: %d ranks per node",
			 in->cmd_pernode);
	} else if (in->cmd_nodes > 0 && n % in->cmd_nodes == 0) {
		log->gpus_per_node = n / in->cmd_nodes;
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "launcher: %d nodes",
			 in->cmd_nodes);
	} else if (in->cmd_np == 0 && in->nranks_lines == 0 &&
		   (in->ngpus > 0 ? in->ngpus : in->cmd_g) *
				   (in->nthread > 0 ? in->nthread : (in->cmd_t > 0 ? in->cmd_t : 1)) == n) {
		log->gpus_per_node = n;
		snprintf(log->pn_evidence, sizeof log->pn_evidence,
			 "one process drives all %d GPUs", n);
	} else {
		snprintf(log->pn_evidence, sizeof log->pn_evidence, "unknown");
	}
}
