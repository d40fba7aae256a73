/*
 * headline.h - the first screen's table, whose columns findings.c reads
 * by position.  Private to reports/.
 */
#ifndef CVC_REP_HEADLINE_H
#define CVC_REP_HEADLINE_H

#include "rep_proj.h"

/* Columns of the headline table, in order (headline.c names them). */
enum {
	H_MODEL, H_PARAMS, H_GPUS, H_HW, H_GEN, H_LAYOUT, H_TPG, H_CS, H_CS_LO, H_CS_HI, H_ES,
	H_ES_LO, H_ES_HI, H_TOP, H_TOP_FRAC, H_NEXT, H_D_CS, H_D_ES, H_TPG_RATIO, H_EFF,
	H_BUBBLE, H_ROOM, H_FLAGS, H_TPS, H_SCEN, H_HOST, H_N
};

/*
 * A layout far from the best is flagged on the first screen (docs/
 * REPORTS.md, "Flags").  These are thresholds of reading, not of pricing:
 * below half of linear scaling from the smallest GPU count of its hardware
 * and model, a quarter of the step idle in the pipeline bubble or waiting
 * on the host (host-bound), or less than a tenth of the GPU's HBM left.
 */
#define REP_FLAG_EFF 0.5
#define REP_FLAG_BUBBLE 0.25
#define REP_FLAG_ROOM 0.10
/* A quarter of the step the GPU waits on the host's kernel launches
 * (host_s, in compute_s): the layout is host-bound, as a quarter of it in
 * the bubble is far from the best; the same reading threshold. */
#define REP_FLAG_HOST 0.25

/*
 * Appends findings (one sentence per model and GPU count, oldest to newest
 * hardware at that count, with the layouts flagged there) and advice (per
 * model and hardware the most GPUs whose best layout carries no flag, one
 * row per model marked recommended) computed from the headline table hl
 * (rows in headline order: model, GPU count, generation).  sync[i] is the
 * local-SGD clause of hl's row i ("" when it syncs every step).  -1 on no
 * memory.
 */
int rep_findings_tables(const cvc_rep_table *hl, const char *const *sync,
			struct rep_tables *out);

/* A count with thousands separators: "16,384". */
const char *rep_fmt_count(double v, char *buf, size_t len);

/*
 * Appends to the findings table f a row (model, gpus, finding) for each
 * model of hl without a best layout at a GPU count of hl, saying why from
 * the scenario table sc: not priced there, none of its layouts valid (the
 * projector's reason), or none fitting in memory (the least it needs).
 * -1 on no memory.
 */
int rep_absent_findings(const cvc_rep_table *sc, const struct rep_roles *ro,
			const cvc_rep_table *hl, cvc_rep_table *f);

#endif
