/*
 * rep_proj.h - the sections of the report as lists of tables.  Private to
 * reports/.
 */
#ifndef CVC_REP_PROJ_H
#define CVC_REP_PROJ_H

#include "rep_int.h"

#define REP_MAX_TABLES 40

/* Tables in page order; owned. */
struct rep_tables {
	cvc_rep_table *v[REP_MAX_TABLES];
	size_t n;
};

/* What the projection charts need, found by column name. */
enum rep_role {
	REP_ROLE_STEP,
	REP_ROLE_COMPUTE,
	REP_ROLE_HIDDEN,
	REP_ROLE_EXPOSED,
	REP_ROLE_BUBBLE,
	REP_ROLE_COMM_SHARE,
	REP_ROLE_EXPOSED_SHARE,
	REP_ROLE_TOKENS,
	REP_ROLE_GPUS,
	REP_ROLE_HW,
	REP_ROLE_MODEL,
	REP_ROLE_PARAMS_B,
	REP_ROLE_PARAMS,
	REP_ROLE_MFU,
	REP_ROLE_MEM,
	REP_ROLE_VALID,
	REP_ROLE_FITS,
	REP_ROLE_INDEX,
	REP_ROLE_TOKENS_LO,
	REP_ROLE_TOKENS_HI,
	REP_ROLE_WARNINGS,
	REP_ROLE_COMM,
	REP_ROLE_N
};

struct rep_roles {
	long col[REP_ROLE_N]; /* column index in the scenario table, -1 = absent */
	char unit[8];         /* suffix of the time columns: "s" or "ms" */
	/* The projection's comm_share is comm / step and its interval can be
	 * shown: it has comm_to_compute, the column that came with that
	 * definition (a projection of an older cvc took comm / (compute +
	 * comm) and has none).  */
	int share_iv;
};

/*
 * Row r's communication share, comm / step: from the comm and step columns
 * when the projection has both (whatever its comm_share column meant), else
 * its comm_share column.  lo and hi (may be NULL) receive its 90% interval,
 * NaN when the projection has none for that definition.
 */
double rep_comm_share(const cvc_rep_table *sc, size_t r, const struct rep_roles *ro,
		      double *lo, double *hi);

/* A scenario's group key (hw, model, gpus), its strings borrowed. */
struct rep_gkey {
	size_t row;             /* scenario row */
	const char *hw, *model; /* hardware label (rep_hw_label), model name */
	double params, gpus;    /* model size (B parameters, NaN unknown), GPU count */
	int gen;                /* hardware generation, 1 = oldest (rep_hw_generations) */
};

/*
 * Sets g[i].gen for g[0..n): the hardware's generation, 1 for the oldest,
 * ordered by the catalog's bf16 peak times scale_compute, then HBM
 * bandwidth times scale_hbm_bw, then the largest peak of any dtype, then
 * HBM capacity; hardware the catalog lacks comes last, in file order.
 * With out, appends the `hardware` table (hw, generation, bf16_tflops,
 * hbm_gbps), the order the page colours by.  -1 on no memory.
 */
int rep_hw_generations(const cvc_rep_table *sc, const struct rep_roles *ro, struct rep_gkey *g,
		       size_t n, struct rep_tables *out);

/* A fraction as a percentage to 3 significant figures, zeros kept:
 * 0.48 -> "48.0%", 0.0213 -> "2.13%", 1 -> "100%". */
const char *rep_pct3(double frac, char *buf, size_t len);

/* Cell (r, c) as a number; NaN when c < 0 or the cell is not a number. */
double rep_num(const cvc_rep_table *t, size_t r, long c);
/* Cell (r, c) as text: strings as they are, numbers formatted into buf. */
const char *rep_text(const cvc_rep_table *t, size_t r, long c, char *buf, size_t len);
/* "tp8 pp4 dp2 mb1" from the layout columns present. */
void rep_layout(const cvc_rep_table *t, size_t r, char *buf, size_t len);
/* The GPU name plus the future-hardware scale factors that are not 1. */
void rep_hw_label(const cvc_rep_table *t, size_t r, const struct rep_roles *ro, char *buf,
		  size_t len);

/*
 * Appends the first-screen tables of the best layouts best[0..n) (one per
 * hardware, model and GPU count): headline (comm and exposed shares with
 * their 90% intervals and the change to the next hardware generation),
 * findings (one sentence per model, computed from headline), and the
 * chart tables exposed_by_type, memory and sensitivity.  -1 on no memory.
 */
int rep_headline_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
			const struct rep_gkey *best, size_t n, struct rep_tables *out);

/*
 * The page's copy of the scenario table, *out (owned by the caller): the
 * columns that differ between scenarios, less the projector's detail
 * columns (per-type communication, most intervals, FLOP counts), so the
 * shipped study's page stays small; its comments are sc's.  -1 on no memory.
 */
int rep_scenarios_view(const cvc_rep_table *sc, cvc_rep_table **out);

/* Role name as the page's JSON calls it. */
const char *rep_role_key(int role);
void rep_roles_find(const cvc_rep_table *t, struct rep_roles *ro);
/* CVC_ERR_FORMAT naming path, the row and the column when a role's number
 * is one no projection holds (a GPU count of 1e308, tokens/s of 1e-320). */
cvc_status rep_roles_check(const cvc_rep_table *t, const struct rep_roles *ro, const char *path,
			   char *err, size_t errlen);

/*
 * Appends the projection's derived tables (proj_time, headline, findings,
 * exposed_by_type, memory, sensitivity, scaling, exposed_heatmap,
 * best_layout) to out; the ones whose columns are missing are left out.
 */
cvc_status rep_projection_tables(const cvc_rep_table *sc, const struct rep_roles *ro,
				 struct rep_tables *out, char *err, size_t errlen);

/*
 * Appends what priced the projection read from path (sc, as read from it),
 * as the projector recorded it (provenance.c): provenance (item, value:
 * the cvc version, database, models, catalog; or that none was recorded),
 * model_origins, provenance_models and provenance_catalog.  A malformed
 * provenance is CVC_ERR_FORMAT naming its file.
 */
cvc_status rep_provenance_tables(const char *path, const cvc_rep_table *sc,
				 struct rep_tables *out, char *err, size_t errlen);

/*
 * Appends proj_warnings: the projector's warnings over the priced
 * scenarios, per hardware and warning (its figures taken out), with how
 * many scenarios carry it and the largest figure; none without warnings.
 */
cvc_status rep_warnings_table(const cvc_rep_table *sc, const struct rep_roles *ro,
			      struct rep_tables *out, char *err, size_t errlen);

/*
 * Appends the trace section's tables (ranks, classes, skew, skew_summary,
 * collectives, collective_model) of run (NULL = every run).
 */
cvc_status rep_trace_tables(cvc_db *db, const char *run, struct rep_tables *out,
			    char *err, size_t errlen);

/* Appends the fitted models of db (models table); none when it is empty. */
cvc_status rep_models_table(cvc_db *db, struct rep_tables *out, char *err, size_t errlen);

/*
 * Appends *t, which the list then owns, and sets *t to NULL; -1 when the
 * list is full, leaving *t (and its ownership) with the caller.
 */
int rep_tables_take(struct rep_tables *out, cvc_rep_table **t);

/*
 * Ends a table builder: with st CVC_OK, appends t (which may be NULL) to
 * out when it has rows, so a section without data is left out; frees t
 * otherwise.  Returns st, or CVC_ERR_NOMEM (err set) when the list is full.
 */
cvc_status rep_tables_keep(struct rep_tables *out, cvc_rep_table *t, cvc_status st, char *err,
			   size_t errlen);

void rep_tables_release(struct rep_tables *t);

#endif
