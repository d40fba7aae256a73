/*
 * validate.c - projections against published end-to-end measurements: a
 * table of measured runs (one row each), every row read as a scenario
 * (vrow.c), projected, and written back with the projection, the measured
 * figure it is compared with and the signed error; then the accuracy over
 * the rows (MAPE, median, share within 10%, bias) next to a naive predictor
 * that only knows the FLOPs, so the skill the models add is visible.
 *
 * The figure compared is tokens/s per GPU: taken as measured, or from the
 * step time (global_batch x seq / step / gpus), or from TFLOP/s or MFU under
 * a named FLOP convention (flops.c); never from a TFLOP/s of unknown
 * convention, since sources count the same run up to 1.3x apart.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "ctx.h"
#include "proj_internal.h"
#include "vby.h"
#include "vrow.h"

#define MAX_FILE ((size_t)64 << 20)
#define MAX_CELL 65536
#define MAX_ROWS 10000000
#define MAX_GROUPS 256
/* The last group's key when a column has more values than groups. */
#define OTHER_GROUP "(every value past the first 255)"
#define NAIVE_MFU 0.40
/* Past this a row's tokens/s and step time are two measurements, not one
 * rounded twice (a printed step time of 3-4 digits rounds within 0.1%). */
#define MEASURES_DISAGREE 0.05

void cvc_proj_validation_release(cvc_proj_validation *v)
{
	if (!v)
		return;
	free(v->groups);
	v->groups = NULL;
	v->ngroups = 0;
}

/* One projected row's errors, kept for the summary. */
struct verr {
	double err, naive; /* signed, % */
	double pred, meas; /* tokens/s per GPU, for the floor (vfloor.c) */
	int group;
	int covered;       /* measurement inside the 90% interval; -1 no interval */
	double halfw;      /* interval half-width, % of the projection */
	int regressed;     /* a release recorded as regressed (vrecipe.c) */
	double over;       /* memory by cvc's count over the usable HBM, % (0: fits) */
	int tfl_agree;     /* conventions whose count of its TFLOP/s gives its
			    * tokens/s within 1% (bit i: convention i); -1: it
			    * prints no TFLOP/s beside them */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Accuracy of the rows of group g (g < 0: all). */
static int stats(const struct verr *e, size_t n, int g, double *scratch, cvc_proj_vstats *st)
{
	size_t k = 0, ki = 0, kr = 0;
	double sum = 0, sgn = 0, nsum = 0, in10 = 0, cov = 0, sum_r = 0;

	st->unfit_rows = 0;
	st->unfit_worst_pct = 0;
	st->tflops_pairs = st->tflops_agree_none = 0;
	memset(st->tflops_agree, 0, sizeof st->tflops_agree);
	for (size_t i = 0; i < n; i++) {
		if (g >= 0 && e[i].group != g)
			continue;
		if (e[i].tfl_agree >= 0) {
			st->tflops_pairs++;
			st->tflops_agree_none += !e[i].tfl_agree;
			for (int c = 0; c < PROJ_FLOPS_N; c++)
				st->tflops_agree[c] += (e[i].tfl_agree >> c) & 1;
		}
		scratch[k++] = fabs(e[i].err);
		sum += fabs(e[i].err);
		sgn += e[i].err;
		nsum += fabs(e[i].naive);
		in10 += fabs(e[i].err) <= 10;
		if (e[i].regressed)
			kr++, sum_r += fabs(e[i].err);
		if (e[i].over > 0) {
			st->unfit_rows++;
			st->unfit_worst_pct = fmax(st->unfit_worst_pct, e[i].over);
		}
	}
	st->expressible = (int)k;
	st->regressed_rows = (int)kr;
	st->mape_unregressed_pct = kr && k > kr ? (sum - sum_r) / (double)(k - kr) : NAN;
	st->mape_pct = st->median_pct = st->within10_pct = st->bias_pct = NAN;
	st->naive_mape_pct = st->skill_pct = NAN;
	st->coverage_pct = st->median_halfwidth_pct = NAN;
	if (!k)
		return 0;
	/* interval coverage and width, where the projection has intervals
	 * (the scratch holds the widths first, then the errors) */
	for (size_t i = 0; i < n; i++) {
		if ((g >= 0 && e[i].group != g) || e[i].covered < 0)
			continue;
		scratch[ki++] = e[i].halfw;
		cov += e[i].covered;
	}
	if (ki) {
		qsort(scratch, ki, sizeof *scratch, cmp_double);
		st->coverage_pct = 100 * cov / (double)ki;
		st->median_halfwidth_pct = ki % 2 ? scratch[ki / 2]
						  : (scratch[ki / 2 - 1] + scratch[ki / 2]) / 2;
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (g < 0 || e[i].group == g)
			scratch[k++] = fabs(e[i].err);
	qsort(scratch, k, sizeof *scratch, cmp_double);
	st->mape_pct = sum / (double)k;
	st->median_pct = k % 2 ? scratch[k / 2] : (scratch[k / 2 - 1] + scratch[k / 2]) / 2;
	st->within10_pct = 100 * in10 / (double)k;
	st->bias_pct = sgn / (double)k;
	st->naive_mape_pct = nsum / (double)k;
	st->skill_pct = st->naive_mape_pct > 0 ? 100 * (1 - st->mape_pct / st->naive_mape_pct)
					       : NAN;
	return 0;
}

/* The floor of group g's rows (g < 0: all): what their repeated scenarios
 * measured apart leave to any projection (vfloor.c). */
static void floor_stats(const struct verr *e, size_t n, int g, struct vpair *pairs,
			cvc_proj_vstats *st)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (g < 0 || e[i].group == g)
			pairs[k++] = (struct vpair){e[i].pred, e[i].meas};
	st->floor_pct = k ? vfloor_sum(pairs, k, &st->repeat_sets, &st->repeat_rows) / (double)k
			  : NAN;
}

/* Skips blank lines and '#' comment lines starting at *pos. */
static void skip_comments(const char *s, size_t len, size_t *pos, long *line)
{
	while (*pos < len) {
		size_t i = *pos;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i < len && s[i] != '\n' && s[i] != '#')
			return;
		while (i < len && s[i] != '\n')
			i++;
		*pos = i < len ? i + 1 : i;
		(*line)++;
	}
}

/* The measured tokens/s per GPU of a row (fin: finalized), or NaN; *from
 * names the column it came from. */
static double measured_tps(const struct vrow *r, const cvc_proj_scenario *fin,
			   const struct proj_pricer *p, const char **from)
{
	if (r->tps > 0) {
		*from = "tokens_per_s_per_gpu";
		return r->tps;
	}
	if (r->iter > 0) {
		*from = "iter_s";
		return fin->global_batch * fin->seq / (r->iter * fin->gpus);
	}
	if (r->conv >= 0 && (r->tflops > 0 || r->mfu > 0)) {
		double tflops = r->tflops;

		*from = "tflops_per_gpu";
		if (!(tflops > 0)) {
			/* MFU against the dense peak of the row's dtype */
			if (!p || !(p->peak_flops[fin->dtype] > 0))
				return NAN;
			tflops = r->mfu / 100 * p->peak_flops[fin->dtype] / 1e12;
			*from = "mfu_pct";
		}
		return proj_flops_tokens_per_s(r->conv, fin, tflops);
	}
	return NAN;
}

/* The conventions under which the TFLOP/s a row prints beside the tokens/s
 * it was compared on (meas, from a tokens/s or step-time cell) gives those
 * within 1%, as struct verr's tfl_agree; -1 when it prints none.  What a
 * table's own pairs say about the count its source uses: Megatron-Bridge's
 * summary agrees under megatron-causal, NeMo's under megatron. */
static int tflops_agreement(const struct vrow *r, const cvc_proj_scenario *fin, double meas)
{
	int mask = 0;

	if (!(r->tflops > 0) || !(meas > 0) || !(r->tps > 0 || r->iter > 0))
		return -1;
	for (int c = 0; c < PROJ_FLOPS_N; c++)
		if (fabs(proj_flops_tokens_per_s(c, fin, r->tflops) / meas - 1) <= 0.01)
			mask |= 1 << c;
	return mask;
}

/*
 * The group of a --by key (vby_key(), which trims each part of spaces and
 * a guess's '?'): letter case says nothing of the value ('FP8', 'fp8 '
 * and 'fp8?' are one group, 'fp8' as written first); its other words do
 * ('fp8 (hybrid)' stays a group of its own).
 */
static int group_of(cvc_proj_validation *v, const char *k)
{
	for (size_t i = 0; i < v->ngroups; i++)
		if (!strcasecmp(v->groups[i].key, k))
			return (int)i;
	/* past the last group, the rows of every other value are one group
	 * that says so (issue 36 item 16: they were dropped, silently) */
	if (v->ngroups >= MAX_GROUPS - 1 && strcmp(k, OTHER_GROUP) != 0)
		return group_of(v, OTHER_GROUP);
	if (v->ngroups >= MAX_GROUPS)
		return -1;
	if (!v->groups) {
		v->groups = calloc(MAX_GROUPS, sizeof *v->groups);
		if (!v->groups)
			return -1;
	}
	snprintf(v->groups[v->ngroups].key, sizeof v->groups[v->ngroups].key, "%s", k);
	return (int)v->ngroups++;
}

static void put_num(FILE *out, double v)
{
	char b[48];

	fputs(cvc_fmt_plain(v, 6, b, sizeof b), out); /* never 4.51592e+06 */
}

static cvc_status nomem(char *err, size_t errlen)
{
	snprintf(err, errlen, "out of memory");
	return CVC_ERR_NOMEM;
}

/* The errors of the projected rows, growing. */
struct verrs {
	struct verr *v;
	size_t n, cap;
};

static void put_fields(FILE *out, char **f, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		if (c)
			putc(',', out);
		cvc_csv_field(out, f[c]);
	}
}

/*
 * Reads the header at *pos into hdr and map's roles; checks it has the
 * columns a projection needs, a measured one and the --by columns
 * (vby.c).
 */
static cvc_status read_header(const char *path, const char *text, size_t len, size_t *pos,
			      long *line, char sep, const cvc_proj_validate_opts *opts,
			      cvc_csv_rec *hdr, struct vrow_map *map, struct vby *by, char *err,
			      size_t errlen)
{
	static const char *const need[] = {"layers", "hidden", "heads", "global_batch"};
	cvc_status rc;

	skip_comments(text, len, pos, line);
	if (*pos >= len) {
		snprintf(err, errlen, "'%s': line %ld: expected a header line", path, *line);
		return CVC_ERR_FORMAT;
	}
	if ((rc = cvc_csv_record_sep(path, text, len, pos, line, sep, hdr, VROW_MAX_COLS, 256, err,
				     errlen)))
		return rc;
	{
		/* one of two equal columns was read, silently (issue 36 item 16) */
		size_t a, b;
		const char *dup = cvc_csv_dup_name(hdr->f, hdr->n, &a, &b);

		if (dup) {
			snprintf(err, errlen, "'%s': line %ld: column '%.64s' given twice (columns %zu "
				 "and %zu)", path, *line - 1, dup, a + 1, b + 1);
			return CVC_ERR_FORMAT;
		}
	}
	vrow_columns(map, hdr->f, hdr->n);
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
		int f = proj_field_find(NULL, need[i]), have = 0;

		for (size_t c = 0; c < map->n; c++)
			have |= map->col[c].role == V_FIELD && map->col[c].field == f;
		if (!have) {
			snprintf(err, errlen, "'%s': line %ld: expected a header with column '%s'",
				 path, *line - 1, need[i]);
			return CVC_ERR_FORMAT;
		}
	}
	if (!map->has_measured) {
		snprintf(err, errlen,
			 "'%s': line %ld: expected a measured column (tokens_per_s_per_gpu, iter_s, "
			 "tflops_per_gpu or mfu_pct)", path, *line - 1);
		return CVC_ERR_FORMAT;
	}
	return vby_parse(by, opts->by, hdr, path, err, errlen);
}

/* What projecting a row gave: the projection, the measurement compared. */
struct vproj {
	cvc_proj_result r;
	cvc_proj_scenario fin;           /* the row's scenario, finalized */
	const struct proj_pricer *p;
	double meas;
	const char *from;                /* the measured column */
	int tfl_agree;                   /* struct verr's */
};

/* Widens v's 90% interval to hold lo .. hi too (tokens/s per GPU): 1, or 0
 * when v has none or lo .. hi is not finite. */
static int interval_holds(struct vproj *v, double lo, double hi)
{
	if (!isfinite(lo) || !isfinite(hi) || !isfinite(v->r.tokens_per_s_per_gpu_lo))
		return 0;
	v->r.tokens_per_s_per_gpu_lo = fmin(v->r.tokens_per_s_per_gpu_lo, lo);
	v->r.tokens_per_s_per_gpu_hi = fmax(v->r.tokens_per_s_per_gpu_hi, hi);
	return 1;
}

/* alt evaluated into a result of its own (the caller frees it); NULL when
 * memory runs out or alt is no valid layout. */
static cvc_proj_result *alt_result(cvc_proj_ctx *ctx, const cvc_proj_scenario *alt)
{
	cvc_proj_result *ra = malloc(sizeof *ra);

	if (!ra)
		return NULL;
	cvc_proj_evaluate(ctx, alt, ra);
	if (!ra->valid) {
		free(ra);
		return NULL;
	}
	return ra;
}

/*
 * A row that guesses its dtype ("fp8?") might have run in the other of
 * bf16 and the guess: its 90% interval holds that projection's too, so that
 * it says what the row does not (the projection stays the guess's).
 */
static void guessed_dtype(cvc_proj_ctx *ctx, struct vrow *row, struct vproj *v)
{
	cvc_proj_scenario alt = v->fin;
	cvc_proj_result *ra;

	alt.dtype = v->fin.dtype == CVC_PROJ_BF16 ? CVC_PROJ_FP8 : CVC_PROJ_BF16;
	if ((ra = alt_result(ctx, &alt)) &&
	    interval_holds(v, ra->tokens_per_s_per_gpu_lo, ra->tokens_per_s_per_gpu_hi))
		vrow_note(row, "interval: %s's projection too (the dtype is a guess)",
			  alt.dtype == CVC_PROJ_BF16 ? "bf16" : "fp8");
	free(ra);
}

/*
 * A row whose release ran features validate does not assume (vrecipe.c
 * "ran, not assumed"): the projection with those features priced too,
 * said beside the row's with its own 90% interval, so that the row says
 * how far what the release turned on moves it.  The row's interval stays
 * its scenario's: the two are different scenarios, and an interval
 * stretched over both (as validate did until cvc priced full-iteration
 * graphs and the fused grouped MLP) reached from the alltoall path's price
 * to everything the release ran, which says less than either.
 */
static void ran_features(cvc_proj_ctx *ctx, struct vrow *row, struct vproj *v)
{
	cvc_proj_scenario alt;
	cvc_proj_result *ra;
	char what[200];

	(void)v;
	if (!vrecipe_ran_alt(row, &alt, what, sizeof what) || proj_finalize(&alt))
		return;
	if ((ra = alt_result(ctx, &alt)))
		vrow_note(row, "priced with what the release ran that cvc prices (%s): %.0f "
			  "tokens/s/GPU, 90%% interval %.0f-%.0f", what, ra->tokens_per_s_per_gpu,
			  ra->tokens_per_s_per_gpu_lo, ra->tokens_per_s_per_gpu_hi);
	free(ra);
}

/* Finalizes, evaluates and finds the measurement of a row read as k
 * (vrow_read()); returns 0, or 1 with row->why when it cannot be compared. */
static int project_row(cvc_proj_ctx *ctx, struct vrow *row, int k, struct vproj *v)
{
	v->fin = row->sc;
	v->p = NULL;
	v->meas = NAN;
	v->from = "";
	v->tfl_agree = -1;
	if (k == 0) {
		const char *why = proj_finalize(&v->fin);

		if (why)
			k = vrow_cannot(row, CVC_PROJ_VWHY_INVALID, "%s", why);
	}
	if (k == 0) {
		cvc_proj_evaluate(ctx, &v->fin, &v->r);
		if (!v->r.valid)
			k = vrow_cannot(row, CVC_PROJ_VWHY_INVALID, "%s", v->r.reason);
	}
	if (k == 0) {
		if (row->g.dtype_guess)
			guessed_dtype(ctx, row, v);
		ran_features(ctx, row, v);
		v->p = proj_ctx_pricer(ctx, &v->fin);
		v->meas = measured_tps(row, &v->fin, v->p, &v->from);
		v->tfl_agree = tflops_agreement(row, &v->fin, v->meas);
		if (!(v->meas > 0) || !isfinite(v->meas))
			k = vrow_cannot(row, CVC_PROJ_VWHY_MEASURE,
					"no measured tokens/s, step time, or TFLOP/s or MFU "
					"with a named FLOP convention (--flops)");
	}
	return k;
}

/* Keeps a compared row's errors (group g) for the summary. */
static cvc_status keep_errors(struct verrs *E, const struct vproj *v, double pred, double e,
			      int g, int regressed)
{
	const cvc_proj_result *r = &v->r;
	double naive = NAN, meas = v->meas;
	struct verr *x;

	if (v->p && v->p->peak_flops[CVC_PROJ_BF16] > 0 && r->model_flops > 0)
		naive = NAIVE_MFU * v->p->peak_flops[CVC_PROJ_BF16] * v->fin.global_batch *
			v->fin.seq / r->model_flops;
	if (cvc_grow(&E->v, &E->cap, E->n + 1, sizeof *E->v, 256) != CVC_OK)
		return CVC_ERR_NOMEM;
	x = &E->v[E->n++];
	x->err = e;
	x->pred = pred;
	x->meas = meas;
	x->naive = 100 * (naive - meas) / meas;
	x->group = g;
	x->regressed = regressed;
	x->tfl_agree = v->tfl_agree;
	x->over = r->fits || !(r->hbm_gb > 0) ? 0 : 100 * (r->mem_gb / r->hbm_gb - 1);
	x->covered = -1;
	x->halfw = NAN;
	if (isfinite(r->tokens_per_s_per_gpu_lo) && isfinite(r->tokens_per_s_per_gpu_hi)) {
		x->covered = meas >= r->tokens_per_s_per_gpu_lo && meas <= r->tokens_per_s_per_gpu_hi;
		x->halfw = 100 * (r->tokens_per_s_per_gpu_hi - r->tokens_per_s_per_gpu_lo) /
			   (2 * pred);
	}
	return CVC_OK;
}

/* The row as read, then the projection with its 90% interval (lo, hi:
 * NaN where it has none), the measurement, the error and what was assumed
 * (k: not projected, why first). */
static void write_row(FILE *out, const cvc_csv_rec *rec, double pred, double lo, double hi,
		      double meas, double e, int k, const struct vrow *row)
{
	put_fields(out, rec->f, rec->n);
	putc(',', out);
	put_num(out, pred);
	putc(',', out);
	put_num(out, lo);
	putc(',', out);
	put_num(out, hi);
	putc(',', out);
	put_num(out, meas);
	putc(',', out);
	if (isfinite(e))
		fprintf(out, "%+.2f", e);
	putc(',', out);
	if (k) {
		/* the why first: it is what a reader of the row needs */
		char a[sizeof row->why + sizeof row->assumed + 24];
		int n = snprintf(a, sizeof a, "not projected: %s%s%s", row->why,
				 row->assumed[0] ? "; " : "", row->assumed);

		cvc_csv_field(out, n > 0 ? a : row->why);
	} else {
		cvc_csv_field(out, row->assumed);
	}
	putc('\n', out);
}

/* One row read as k (vrow_read()): projected, compared, kept and
 * written.  by: the --by groups (none: by->n 0). */
static cvc_status validate_row(cvc_proj_ctx *ctx, struct vrow *row, int k,
			       const cvc_csv_rec *rec, const struct vby *by, cvc_proj_validation *sum,
			       struct verrs *E, FILE *out, char *err, size_t errlen)
{
	struct vproj v;
	double pred = NAN, lo = NAN, hi = NAN, e = NAN;
	int g = -1;

	if (by->n > 0) {
		char key[128];

		g = group_of(sum, vby_key(by, row, rec, key, sizeof key));
		if (g >= 0)
			sum->groups[g].st.rows++;
	}
	k = project_row(ctx, row, k, &v);
	sum->all.measured += row->has_measured;
	if (g >= 0)
		sum->groups[g].st.measured += row->has_measured;
	if (k) {
		int w = row->kind >= 0 && row->kind < CVC_PROJ_VWHY_N ? row->kind : CVC_PROJ_VWHY_INVALID;

		sum->all.not_projected[w]++;
		if (g >= 0)
			sum->groups[g].st.not_projected[w]++;
	}
	if (k == 0) {
		pred = v.r.tokens_per_s_per_gpu;
		lo = v.r.tokens_per_s_per_gpu_lo;
		hi = v.r.tokens_per_s_per_gpu_hi;
		e = 100 * (pred - v.meas) / v.meas;
		vrow_note(row, "measured: %s", v.from);
		/* every row ran: a layout cvc's memory count refuses is a miss
		 * of that count, said beside the speed it was still priced at */
		if (!v.r.fits && v.r.hbm_gb > 0)
			vrow_note(row, "memory: %.1f GB by cvc's count, over the %.1f GB it takes "
				  "as usable (docs/SCENARIOS.md \"Memory\"), yet the run fit",
				  v.r.mem_gb, v.r.hbm_gb);
		/* a row whose tokens/s and step time disagree (dgxc-benchmarking's
		 * Grok-1 GB200 rows: half the step's tokens): which one the
		 * error is against, and by how much the other differs */
		if (row->tps > 0 && row->iter > 0 && v.fin.gpus > 0) {
			double it = v.fin.global_batch * v.fin.seq / (row->iter * v.fin.gpus);

			if (fabs(it / row->tps - 1) > MEASURES_DISAGREE)
				vrow_note(row, "its iter_s gives %.0f tokens/s/GPU, %+.0f%% from its "
					  "tokens_per_s_per_gpu: the row's two measurements disagree",
					  it, 100 * (it / row->tps - 1));
		}
		if (keep_errors(E, &v, pred, e, g, row->regressed))
			return nomem(err, errlen);
	}
	write_row(out, rec, pred, lo, hi, v.meas, e, k, row);
	return CVC_OK;
}

/* The accuracy over all rows and per group. */
static cvc_status summarize(cvc_proj_validation *sum, const struct verrs *E, char *err,
			    size_t errlen)
{
	double *scratch = malloc((E->n ? E->n : 1) * sizeof *scratch);
	struct vpair *pairs = malloc((E->n ? E->n : 1) * sizeof *pairs);

	if (!scratch || !pairs) {
		free(scratch);
		free(pairs);
		return nomem(err, errlen);
	}
	stats(E->v, E->n, -1, scratch, &sum->all);
	floor_stats(E->v, E->n, -1, pairs, &sum->all);
	for (size_t g = 0; g < sum->ngroups; g++) {
		int rows = sum->groups[g].st.rows;

		stats(E->v, E->n, (int)g, scratch, &sum->groups[g].st);
		floor_stats(E->v, E->n, (int)g, pairs, &sum->groups[g].st);
		sum->groups[g].st.rows = rows;
	}
	free(scratch);
	free(pairs);
	return CVC_OK;
}

/* A UTF-8 byte-order mark, which spreadsheets put before a CSV's header. */
static size_t skip_bom(const char *s, size_t len)
{
	return len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3) ? 3 : 0;
}

/*
 * The field separator: the one of ',', ';' and tab the header line holds
 * most often outside quotes (spreadsheets where the comma is the decimal
 * mark write ';'; copies from a web table are tab separated); ',' on a tie.
 */
static char detect_sep(const char *s, size_t len, size_t pos)
{
	size_t n[3] = {0, 0, 0};
	static const char seps[3] = {',', ';', '\t'};
	int q = 0, best = 0;

	for (size_t i = pos; i < len && (q || (s[i] != '\n' && s[i] != '\r')); i++) {
		if (s[i] == '"')
			q = !q;
		for (int j = 0; j < 3 && !q; j++)
			n[j] += s[i] == seps[j];
	}
	for (int j = 1; j < 3; j++)
		if (n[j] > n[best])
			best = j;
	return seps[best];
}

/* Past the line that starts at or holds pos: where a row whose quoting
 * cannot be read is dropped, so the rows after it are still read. */
static size_t next_line(const char *s, size_t len, size_t pos)
{
	const char *nl = memchr(s + pos, '\n', len - pos);

	return nl ? (size_t)(nl - s) + 1 : len;
}

/* A record whose quoting could not be read: written with empty cells and
 * the reader's message (without the file name the summary gives). */
static cvc_status bad_record(cvc_proj_ctx *ctx, struct vrow *row, long first, const char *msg,
			     const cvc_csv_rec *hdr, const struct vby *by, cvc_proj_validation *sum,
			     struct verrs *E, FILE *out, char *err, size_t errlen)
{
	static char blank[1];
	/* the reader's words after its "'file': line N: ", N where it saw the
	 * fault; the row is named by the line it starts on */
	const char *at = strstr(msg, ": expected");
	char *empty[VROW_MAX_COLS];
	cvc_csv_rec rec = {empty, hdr->n, 0};

	for (size_t c = 0; c < hdr->n; c++)
		empty[c] = blank;
	vrow_start(row, 0, -1);
	vrow_cannot(row, CVC_PROJ_VWHY_ROW, "line %ld%s (the row's first line skipped)", first,
		    at ? at : msg);
	return validate_row(ctx, row, 1, &rec, by, sum, E, out, err, errlen);
}

/*
 * The cells of a record as the header's columns: a short row's missing
 * trailing cells read as empty (editors drop trailing commas), said; a long
 * row whose extra cells are not empty is not read (a comma inside an
 * unquoted cell shifts every cell after it).  Returns 0, or 1 with the
 * reason in row.
 */
static int fit_cells(struct vrow *row, const cvc_csv_rec *hdr, const cvc_csv_rec *rec,
		     char **cells)
{
	static char blank[1];
	int all_empty = 1;

	for (size_t c = 0; c < hdr->n; c++) {
		cells[c] = c < rec->n ? rec->f[c] : blank;
		all_empty &= !cells[c][strspn(cells[c], " \t")];
	}
	for (size_t c = hdr->n; c < rec->n; c++)
		if (rec->f[c][strspn(rec->f[c], " \t")])
			return vrow_cannot(row, CVC_PROJ_VWHY_ROW,
					   "expected %zu cells, got %zu (a separator inside an "
					   "unquoted cell?)", hdr->n, rec->n);
	if (all_empty)
		return vrow_cannot(row, CVC_PROJ_VWHY_ROW, "an empty row");
	if (rec->n < hdr->n)
		vrow_assume(row, "cells %zu-%zu empty (the line has %zu of the header's %zu)",
			    rec->n + 1, hdr->n, rec->n, hdr->n);
	return 0;
}

cvc_status cvc_proj_validate(const char *path, cvc_proj_ctx *ctx,
			     const cvc_proj_validate_opts *opts, FILE *out,
			     cvc_proj_validation *sum, char *err, size_t errlen)
{
	static const cvc_proj_validate_opts none = {NULL, NULL, 0};
	char *text = NULL, **cells = NULL;
	const char *nul;
	size_t len = 0, pos = 0;
	long line = 1;
	cvc_csv_rec hdr = {0}, rec = {0};
	struct vrow_map *map = NULL;
	struct vrow *row = NULL;
	struct verrs E = {NULL, 0, 0};
	proj_archs *archs = NULL;
	int legacy, conv = -1;
	struct vby by = {0};
	char sep, rerr[512];
	cvc_status rc;

	if (!opts)
		opts = &none;
	memset(sum, 0, sizeof *sum);
	if (opts->flops && (conv = proj_flops_parse(opts->flops)) < 0) {
		snprintf(err, errlen, "unknown FLOP convention '%s' (expected one of %s)",
			 opts->flops, proj_flops_names());
		return CVC_ERR_USAGE;
	}
	if ((rc = cvc_file_read(path, MAX_FILE, &text, &len, err, errlen)))
		return rc;
	/* a table is text: a NUL byte says this is some other file */
	if ((nul = memchr(text, 0, len)) != NULL) {
		snprintf(err, errlen, "'%s': byte %zu: expected a text table (CSV), found a NUL byte",
			 path, (size_t)(nul - text));
		rc = CVC_ERR_FORMAT;
		goto out;
	}
	map = calloc(1, sizeof *map);
	row = calloc(1, sizeof *row);
	cells = calloc(VROW_MAX_COLS, sizeof *cells);
	if (!map || !row || !cells) {
		rc = nomem(err, errlen);
		goto out;
	}
	if ((rc = proj_archs_load(&archs, err, errlen)))
		goto out;
	row->archs = archs;
	pos = skip_bom(text, len);
	skip_comments(text, len, &pos, &line);
	sep = detect_sep(text, len, pos);
	if ((rc = read_header(path, text, len, &pos, &line, sep, opts, &hdr, map, &by, err,
			      errlen)))
		goto out;
	legacy = !map->has_gpu && !map->has_dtype;
	put_fields(out, hdr.f, hdr.n);
	fputs(",predicted_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu_lo,"
	      "predicted_tokens_per_s_per_gpu_hi,measured_tokens_per_s_per_gpu,error_pct,assumed\n",
	      out);
	for (;;) {
		long first;
		size_t start;
		int k;

		skip_comments(text, len, &pos, &line);
		if (pos >= len)
			break;
		first = line;
		start = pos;
		if (sum->all.rows >= MAX_ROWS) {
			snprintf(err, errlen, "'%s': line %ld: expected at most %d rows", path, first,
				 MAX_ROWS);
			rc = CVC_ERR_FORMAT;
			goto out;
		}
		sum->all.rows++;
		row->path = path;
		row->line = first;
		row->strict = opts->strict;
		row->decimal_comma = sep == ';';
		rc = cvc_csv_record_sep(path, text, len, &pos, &line, sep, &rec, VROW_MAX_COLS,
					MAX_CELL, rerr, sizeof rerr);
		if (rc == CVC_ERR_NOMEM) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		if (rc) {
			pos = next_line(text, len, start);
			line = first + 1;
			if ((rc = bad_record(ctx, row, first, rerr, &hdr, &by, sum, &E, out,
					     err, errlen)))
				goto out;
			continue;
		}
		vrow_start(row, legacy, conv);
		k = fit_cells(row, &hdr, &rec, cells);
		if (!k)
			k = vrow_read(row, map, hdr.f, cells, ctx, legacy);
		{
			cvc_csv_rec shown = {cells, hdr.n, 0};

			if ((rc = validate_row(ctx, row, k, &shown, &by, sum, &E, out, err,
					       errlen)))
				goto out;
		}
	}
	rc = summarize(sum, &E, err, errlen);
out:
	if (rc)
		cvc_proj_validation_release(sum);
	cvc_csv_rec_release(&hdr);
	cvc_csv_rec_release(&rec);
	free(cells);
	free(E.v);
	free(row);
	free(map);
	free(text);
	proj_archs_free(archs);
	return rc;
}

double cvc_proj_megatron_flops(double batch, double seq, double layers, double hidden,
			       double vocab)
{
	return 96.0 * batch * seq * layers * hidden * hidden *
	       (1 + seq / (6 * hidden) + vocab / (16 * layers * hidden));
}
