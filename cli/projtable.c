/*
 * projtable.c - what `cvc project` shows a person at a terminal: the best
 * layouts (one per model, hardware and GPU count, or the rows --top kept)
 * with their shares of the step and the 90% intervals, instead of a
 * hundred-column CSV (`nsys stats` and `cvc analyze` print tables too; a
 * script gets the CSV by --csv, a pipe or --format csv).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"

enum {
	PT_MODEL, PT_HW, PT_GPUS, PT_LAYOUT, PT_FITS, PT_TPG, PT_STEP, PT_MFU, PT_CS, PT_ES,
	PT_MEM, PT_INDEX, PT_N
};

cvc_rep_table *cli_proj_table_new(void)
{
	static const char *const cols[PT_N] = {
		"model", "hardware", "gpus", "layout", "fits", "tokens_per_s_per_gpu", "step_s",
		"mfu", "comm_share (90%)", "exposed_share (90%)", "mem_gb", "index"};

	return cvc_rep_table_new("project", NULL, PT_N, cols);
}

/* "49% (38–63%)" */
static void share(double v, double lo, double hi, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (isfinite(lo) && isfinite(hi))
		snprintf(buf, len, "%.0f%% (%.0f\xe2\x80\x93%.0f%%)", 100 * v, 100 * lo, 100 * hi);
	else
		snprintf(buf, len, "%.0f%%", 100 * v);
}

/* "tp8 pp4 dp32 mb1 zero1 rc:selective": the layout as the report writes it. */
static void layout(const cvc_proj_scenario *sc, char *buf, size_t len)
{
	static const char *const rc[] = {"none", "selective", "full"};
	int n = snprintf(buf, len, "tp%.0f pp%.0f dp%.0f mb%.0f", sc->tp, sc->pp, sc->dp,
			 sc->micro_batch);

	if (n < 0 || (size_t)n >= len)
		return;
	if (sc->cp > 1)
		n += snprintf(buf + n, len - (size_t)n, " cp%.0f", sc->cp);
	if (sc->ep > 1 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " ep%.0f", sc->ep);
	if (sc->zero > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " zero%.0f", sc->zero);
	if (sc->recompute >= 0 && sc->recompute < 3 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " rc:%s", rc[sc->recompute]);
}

/* The GPU and the scale factors that are not 1: "B200 compute x2". */
static void hardware(const cvc_proj_scenario *sc, char *buf, size_t len)
{
	static const char *const names[] = {"compute", "hbm_bw", "hbm_cap", "intra_bw", "inter_bw"};
	const double f[] = {sc->scale_compute, sc->scale_hbm_bw, sc->scale_hbm_cap,
			    sc->scale_intra_bw, sc->scale_inter_bw};
	size_t n = (size_t)snprintf(buf, len, "%s", sc->gpu);

	for (size_t k = 0; k < 5 && n < len; k++)
		if (f[k] != 1)
			n += (size_t)snprintf(buf + n, len - n, " %s x%g", names[k], f[k]);
}

int cli_proj_table_add(cvc_rep_table *t, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	char lay[160], hw[160], cs[48], es[48];
	long k = cvc_rep_table_add_row(t);

	if (k < 0)
		return -1;
	layout(sc, lay, sizeof lay);
	hardware(sc, hw, sizeof hw);
	share(r->valid ? r->comm_share : NAN, r->comm_share_lo, r->comm_share_hi, cs, sizeof cs);
	share(r->valid ? r->exposed_share : NAN, r->exposed_share_lo, r->exposed_share_hi, es,
	      sizeof es);
	if (cvc_rep_table_set_str(t, (size_t)k, PT_MODEL, sc->model) ||
	    cvc_rep_table_set_str(t, (size_t)k, PT_HW, hw) ||
	    cvc_rep_table_set_str(t, (size_t)k, PT_LAYOUT, lay) ||
	    cvc_rep_table_set_str(t, (size_t)k, PT_FITS,
				  !r->valid ? "invalid" : r->fits ? "yes" : "no") ||
	    cvc_rep_table_set_str(t, (size_t)k, PT_CS, cs) ||
	    cvc_rep_table_set_str(t, (size_t)k, PT_ES, es))
		return -1;
	cvc_rep_table_set_num(t, (size_t)k, PT_GPUS, sc->gpus);
	cvc_rep_table_set_num(t, (size_t)k, PT_INDEX, (double)sc->index);
	if (r->valid) {
		cvc_rep_table_set_num(t, (size_t)k, PT_TPG, r->tokens_per_s_per_gpu);
		cvc_rep_table_set_num(t, (size_t)k, PT_STEP, r->step_s);
		cvc_rep_table_set_num(t, (size_t)k, PT_MFU, r->mfu);
		cvc_rep_table_set_num(t, (size_t)k, PT_MEM, r->mem_gb);
	}
	return 0;
}
