/*
 * pplayout.c - pipeline layouts as recipes write them: which decoder
 * layers each virtual pipeline stage holds when the stages are not the
 * even split (or the first/last-stage split of stages.c).
 *
 * Two sources:
 *  - pp_layout: Megatron-Core's --pipeline-model-parallel-layout string
 *    (NVIDIA/Megatron-LM docs/api-guide/pipeline_parallel_layout.md
 *    @2d2c30cf and megatron/core/transformer/pipeline_parallel_layer_layout.py
 *    @00caa53a, read for its grammar): E embedding, t a decoder layer, m a
 *    multi-token prediction layer, L the loss; '|' ends a virtual stage,
 *    "x*N" repeats a symbol and "(...)*N" a group, ',' is cosmetic.  Stage s
 *    runs on pipeline rank s mod pp as its virtual stage s div pp, and the
 *    decoder layers are numbered in the string's order.
 *  - the balanced layout Megatron-Bridge's DeepSeek-V3 recipe writes for
 *    61 layers (src/megatron/bridge/recipes/deepseek/deepseek_v3.py
 *    @05d003fb layout_map for pp x vpp = 4, 8, 16 virtual stages; the
 *    H100 performance config's "Et|(tt|)*30mL" for 32,
 *    scripts/performance/configs/deepseek/deepseek_llm_pretrain.py
 *    @01328424): every virtual stage but the last holds c = ceil(L / S)
 *    layers, the first with the embedding, and the last the rest with the
 *    prediction modules and the loss; when that rest is below zero the last
 *    holds only those and the first the rest.  cvc uses it when no layout
 *    is given and neither the even split nor Megatron-Core's
 *    account-for-embedding/loss split fits (proj_stage_layers()).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proj_internal.h"

#define LAYOUT_MAX_SYMBOLS 1e7 /* an expanded layout longer is refused */

/* One symbol of the expanded layout at a time. */
struct walker {
	void (*fn)(struct walker *w, char c);
	double n; /* symbols so far */
};

/* A repetition count after '*' at *p: digits, at most 1e6. */
static const char *count(const char **p, double *reps)
{
	const char *s = *p;
	double v = 0;

	if (*s < '0' || *s > '9')
		return "expected a count after '*'";
	for (; *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (*s - '0')) > 1e6)
			return "a count after '*' above 10^6";
	*reps = v;
	*p = s;
	return NULL;
}

/* The symbols of body .. end (no parentheses): a symbol, or one repeated. */
static const char *run(const char *s, const char *end, struct walker *w)
{
	const char *why;

	while (s < end) {
		char c = *s++;
		double reps = 1;

		if (c == ',')
			continue;
		if (!strchr("ELtm|", c))
			return "expected E, t, m, L, '|', '(...)*N' or 'x*N'";
		if (s < end && *s == '*') {
			s++;
			if ((why = count(&s, &reps)))
				return why;
			if (s > end)
				return "')' inside a count";
		}
		if ((w->n += reps) > LAYOUT_MAX_SYMBOLS)
			return "more than 10^7 symbols expanded";
		for (double r = 0; r < reps; r++)
			w->fn(w, c);
	}
	return NULL;
}

/* Walks layout s as Megatron-Core expands it (groups, then symbols). */
static const char *walk(const char *s, struct walker *w)
{
	const char *why;

	w->n = 0;
	while (*s) {
		const char *end, *p;
		double reps;

		if (*s != '(') {
			/* up to the next group */
			end = strchr(s, '(');
			end = end ? end : s + strlen(s);
			if (strchr(s, ')') && strchr(s, ')') < end)
				return "')' without '('";
			if ((why = run(s, end, w)))
				return why;
			s = end;
			continue;
		}
		end = strchr(s + 1, ')');
		if (!end || end == s + 1)
			return "'(' without a group and ')'";
		if (memchr(s + 1, '(', (size_t)(end - s - 1)))
			return "groups inside groups";
		p = end + 1;
		if (*p != '*')
			return "expected '*N' after ')'";
		p++;
		if ((why = count(&p, &reps)))
			return why;
		if (*p == '*')
			return "a count repeated";
		for (double r = 0; r < reps; r++)
			if ((why = run(s + 1, end, w)))
				return why;
		s = p;
	}
	return NULL;
}

/* The check: what Megatron-Core's validate_layer_layout() asserts. */
struct check {
	struct walker w;
	double stages, t, m, E, L, first_m_stage, last_m_stage, t_after_m;
	char first, last;
};

static void check_sym(struct walker *w, char c)
{
	struct check *k = (struct check *)w;

	if (c == '|') {
		k->stages++;
		return;
	}
	if (!k->first)
		k->first = c;
	k->last = c;
	k->t += c == 't';
	k->E += c == 'E';
	k->L += c == 'L';
	k->t_after_m += c == 't' && k->m > 0;
	if (c == 'm') {
		if (!(k->m > 0))
			k->first_m_stage = k->stages;
		k->last_m_stage = k->stages;
		k->m++;
	}
}

const char *proj_pp_layout_check(const cvc_proj_scenario *sc, double *vpp)
{
	struct check k;
	const char *why;
	double pp = sc->pp >= 1 ? sc->pp : 1, v;

	memset(&k, 0, sizeof k);
	k.w.fn = check_sym;
	if ((why = walk(sc->pp_layout, &k.w)))
		return why;
	k.stages++; /* the last stage has no '|' after it */
	if (k.first != 'E' || k.last != 'L' || k.E != 1 || k.L != 1)
		return "pp_layout must start with E (the embedding) and end with L (the loss), once each";
	if (k.t != sc->layers)
		return "pp_layout's decoder layers (t) differ from layers";
	if (k.m != (sc->mtp_layers > 0 ? sc->mtp_layers : 0))
		return "pp_layout's prediction layers (m) differ from mtp_layers";
	if (k.t_after_m > 0)
		return "pp_layout has decoder layers after an m";
	if (proj_fmod(k.stages, pp) != 0)
		return "pp_layout's stages do not divide by pp";
	v = k.stages / pp;
	if (k.m > 0 && k.first_m_stage != k.last_m_stage)
		return "pp_layout's m layers must share one stage";
	if (k.m > 0 && k.first_m_stage < (v - 1) * pp)
		return "pp_layout's m layers must be in their rank's last virtual stage";
	*vpp = v;
	return NULL;
}

/*
 * A standalone prediction stage (Megatron-Core's mtp_standalone: the m
 * layers on a rank before the loss's, "Et*3|(tt|)*29m|L") runs the
 * modules whole but for their logits and loss: the next tokens' embedding
 * (a copy of the table kept in the embedding group), the norms, the 2h ->
 * h projection and the layer, and sends the hidden states of the model
 * and of each module, concatenated along the sequence, to the loss's
 * rank, which holds the only output layer and computes every logit and
 * loss (NVIDIA/Megatron-LM pipeline_parallel_layer_layout.py @00caa53a
 * validate_layer_layout's mtp_standalone; multi_token_prediction.py
 * @00611e6e MultiTokenPredictionBlock.forward and process_mtp_loss;
 * gpt_model.py @007562f9 _postprocess).
 */
double proj_pp_mtp_rank(const cvc_proj_scenario *sc)
{
	struct check k;
	double pp = sc->pp >= 1 ? sc->pp : 1;

	if (!(sc->mtp_layers > 0) || !(pp > 1) || !sc->pp_layout || !sc->pp_layout[0])
		return pp - 1;
	memset(&k, 0, sizeof k);
	k.w.fn = check_sym; /* the walk proj_pp_layout_check() reads */
	if (walk(sc->pp_layout, &k.w) || !(k.m > 0))
		return pp - 1;
	return proj_fmod(k.first_m_stage, pp);
}

/* Rank i's layers by kind as the layout places them. */
struct rank {
	struct walker w;
	const cvc_proj_scenario *sc;
	double pp, i, stage, at, start, *n;
	double mtp;
};

static void flush(struct rank *r)
{
	double part[PROJ_NKIND];

	if (proj_fmod(r->stage, r->pp) == r->i && r->at > r->start) {
		proj_kinds_in(r->sc, r->start, r->at, part);
		for (int k = 0; k < PROJ_NKIND; k++)
			r->n[k] += part[k];
	}
	r->start = r->at;
}

static void rank_sym(struct walker *w, char c)
{
	struct rank *r = (struct rank *)w;

	if (c == 't')
		r->at++;
	else if (c == 'm' && proj_fmod(r->stage, r->pp) == r->i)
		r->mtp++;
	else if (c == '|') {
		flush(r);
		r->stage++;
	}
}

/* The balanced layout's layers on virtual stage s of S (c each but the
 * first, c0, and the last, cl), and those before it. */
static void balanced(double L, double S, double s, double *len, double *before)
{
	double c = ceil(L / S), cl = L - (S - 1) * c, c0 = c;

	if (cl < 0) {
		cl = 0;
		c0 = L - (S - 2) * c;
	}
	*len = s == 0 ? c0 : s == S - 1 ? cl : c;
	*before = s == 0 ? 0 : c0 + (s - 1) * c;
}

const char *proj_pp_balanced_check(const cvc_proj_scenario *sc)
{
	double S = sc->pp * (sc->vpp >= 1 ? sc->vpp : 1), len, before;

	balanced(sc->layers, S, 0, &len, &before);
	if (!(len >= 1) || S < 2)
		return "layers not divisible by pp*vpp, and no balanced layout of them (give pp_layout, or "
		       "first_stage_layers, last_stage_layers)";
	return NULL;
}

void proj_pp_layout_rank(const cvc_proj_scenario *sc, double i, double n[PROJ_NKIND], double *mtp)
{
	double pp = sc->pp, v = sc->vpp >= 1 ? sc->vpp : 1;

	memset(n, 0, PROJ_NKIND * sizeof n[0]);
	*mtp = 0;
	if (sc->pp_layout && sc->pp_layout[0]) {
		struct rank r;

		memset(&r, 0, sizeof r);
		r.w.fn = rank_sym;
		r.sc = sc;
		r.pp = pp;
		r.i = i;
		r.n = n;
		if (walk(sc->pp_layout, &r.w) == NULL)
			flush(&r);
		*mtp = r.mtp;
		return;
	}
	for (double c = 0; c < v; c++) {
		double s = c * pp + i, len, before, part[PROJ_NKIND];

		balanced(sc->layers, pp * v, s, &len, &before);
		proj_kinds_in(sc, before, before + len, part);
		for (int k = 0; k < PROJ_NKIND; k++)
			n[k] += part[k];
	}
	if (i == pp - 1)
		*mtp = sc->mtp_layers > 0 ? sc->mtp_layers : 0;
}
