/*
 * hworder.c - the order of the projection's hardware: oldest generation
 * first, computed from the catalog (bf16 peak times the projection's
 * compute scale, then HBM bandwidth times its scale, then the largest peak
 * of any dtype, then HBM capacity), never assumed from names or from the
 * file.  Every table and chart of the page follows it, and the page takes
 * one colour per hardware from it (the `hardware` table).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "rep_proj.h"

/* A distinct hardware label and what orders it among generations. */
struct hwgen {
	const char *hw;
	double peak, hbm, top, cap; /* bf16 peak, HBM bandwidth, any dtype's peak,
				       HBM capacity: scale factors applied */
	size_t first;               /* first group key on it: unknown GPUs' order */
};

static double scale(const cvc_rep_table *sc, size_t r, const char *col)
{
	double v = rep_num(sc, r, cvc_rep_table_find(sc, col));

	return isfinite(v) && v > 0 ? v : 1;
}

static int cmp3(double a, double b)
{
	return a < b ? -1 : a > b;
}

static int cmp_gen(const void *pa, const void *pb)
{
	const struct hwgen *a = pa, *b = pb;
	int ka = isfinite(a->peak), kb = isfinite(b->peak), c;

	if (ka != kb)
		return kb - ka; /* GPUs the catalog knows first */
	if (ka && ((c = cmp3(a->peak, b->peak)) || (c = cmp3(a->hbm, b->hbm)) ||
		   (c = cmp3(a->top, b->top)) || (c = cmp3(a->cap, b->cap))))
		return c;
	return a->first < b->first ? -1 : a->first > b->first;
}

/* Fills gv[ng] for g's hardware from the catalog (cat may be NULL). */
static void hw_figures(const cvc_rep_table *sc, const struct rep_roles *ro,
		       const cvc_hw_catalog *cat, const struct rep_gkey *g, size_t first,
		       struct hwgen *gv)
{
	char buf[64];
	const cvc_hw_spec *sp =
		cat ? cvc_hw_catalog_lookup(cat, rep_text(sc, g->row, ro->col[REP_ROLE_HW], buf,
							  sizeof buf))
		    : NULL;
	double top = 0;

	gv->hw = g->hw;
	gv->first = first;
	gv->peak = gv->hbm = gv->top = gv->cap = NAN;
	if (!sp || !(sp->peak_tflops[CVC_HW_BF16] > 0))
		return;
	for (int d = 0; d < CVC_HW_NDTYPE; d++)
		top = fmax(top, sp->peak_tflops[d]);
	gv->peak = sp->peak_tflops[CVC_HW_BF16] * scale(sc, g->row, "scale_compute");
	gv->top = top * scale(sc, g->row, "scale_compute");
	gv->hbm = sp->hbm_bw_gbps * scale(sc, g->row, "scale_hbm_bw");
	gv->cap = sp->hbm_gb * scale(sc, g->row, "scale_hbm_cap");
}

/* The `hardware` table: one row per generation, oldest first. */
static int hardware_table(const struct hwgen *gv, size_t ng, struct rep_tables *out)
{
	static const char *const cols[] = {"hw", "generation", "bf16_tflops", "hbm_gbps"};
	cvc_rep_table *t = cvc_rep_table_new("hardware", "Hardware of the projection, oldest "
					     "generation first (bf16 peak, then HBM bandwidth)",
					     4, cols);
	int rc = t ? 0 : -1;

	for (size_t k = 0; !rc && k < ng; k++) {
		long i = cvc_rep_table_add_row(t);

		if (i < 0 || cvc_rep_table_set_str(t, (size_t)i, 0, gv[k].hw)) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(t, (size_t)i, 1, (double)(k + 1));
		cvc_rep_table_set_num(t, (size_t)i, 2, gv[k].peak);
		cvc_rep_table_set_num(t, (size_t)i, 3, gv[k].hbm);
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

int rep_hw_generations(const cvc_rep_table *sc, const struct rep_roles *ro, struct rep_gkey *g,
		       size_t n, struct rep_tables *out)
{
	struct hwgen *gv = calloc(n ? n : 1, sizeof *gv);
	cvc_hw_catalog *cat = NULL;
	size_t ng = 0;
	int rc;

	if (!gv)
		return -1;
	if (cvc_hw_catalog_new(&cat) != CVC_OK) {
		cvc_hw_catalog_free(cat); /* no catalog: the file's order */
		cat = NULL;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < ng && strcmp(gv[k].hw, g[i].hw); k++)
			;
		if (k == ng)
			hw_figures(sc, ro, cat, &g[i], i, &gv[ng++]);
	}
	cvc_hw_catalog_free(cat);
	qsort(gv, ng, sizeof *gv, cmp_gen);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < ng; k++)
			if (strcmp(gv[k].hw, g[i].hw) == 0)
				g[i].gen = (int)k + 1;
	rc = out ? hardware_table(gv, ng, out) : 0;
	free(gv);
	return rc;
}
