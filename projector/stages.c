/*
 * stages.c - which layers each pipeline stage holds: the layers per stage
 * (uneven first and last stages, Megatron-Core's account-for-embedding
 * split, or a pipeline layout: pplayout.c), and under an MoE model's layer
 * pattern (moe_first_dense,
 * moe_layer_freq) how many of them are MoE layers and how many dense
 * (docs/SCENARIOS.md "Uneven pipeline stages", "MoE").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proj_internal.h"

/* Layers of the main shape (the MoE layers of an MoE model, every layer
 * of a dense one) among the model's first n layers. */
static double main_below(const cvc_proj_scenario *sc, double n)
{
	double k = proj_layers_mixed(sc) ? sc->moe_first_dense : 0;
	double f = proj_layers_mixed(sc) ? sc->moe_layer_freq : 1;

	return n <= k ? 0 : ceil((n - k) / f);
}

double proj_main_layers(const cvc_proj_scenario *sc, double lo, double hi)
{
	return hi > lo ? main_below(sc, hi) - main_below(sc, lo) : 0;
}

/* Chunk c's layers of a stage of Ls layers cut in v chunks: equal, the
 * remainder on the last chunks of the first stage and on the first chunks
 * of the others (with Megatron-Core's account-for-embedding/loss split,
 * exactly its first stage's short first chunk and last stage's short last
 * one); and the layers of its chunks before c. */
static double chunk_len(double Ls, double v, int first, double c)
{
	double base = floor(Ls / v), rem = Ls - base * v;

	return base + (first ? c >= v - rem : c < rem);
}

static double chunks_before(double Ls, double v, int first, double c)
{
	double base = floor(Ls / v), rem = Ls - base * v;

	return c * base + (first ? fmax(0, c - (v - rem)) : fmin(c, rem));
}

/*
 * Stage i's (0-based) layers by kind, given the layers of the first, each
 * middle and the last stage (fml: proj_stage_layers()): virtual stage
 * c pp + i holds the model's layers after those of every earlier virtual
 * stage (Megatron-Core's interleaved order).  The multi-token prediction
 * modules' layers sit on the last stage, of the main kind (DeepSeek-V3's
 * is an MoE layer).
 */
void proj_stage_kinds(const cvc_proj_scenario *sc, const double fml[3], double i,
		      double n[PROJ_NKIND])
{
	double pp = sc->pp >= 1 ? sc->pp : 1, v = sc->vpp >= 1 ? sc->vpp : 1;
	double f = fml[0], m = fml[1], l = fml[2];
	double Li = i == 0 ? f : i == pp - 1 ? l : m, mtp;

	if (proj_pp_layout_on(sc)) { /* a layout's stages (pplayout.c) */
		proj_pp_layout_rank(sc, i, n, &mtp);
		n[proj_main_kind(sc)] += mtp;
		return;
	}
	if (pp == 1 || proj_layers_uniform(sc)) {
		memset(n, 0, PROJ_NKIND * sizeof n[0]);
		if (pp == 1)
			proj_kinds_in(sc, 0, sc->layers, n);
		else
			n[proj_kind_of(sc, 0)] = Li;
	} else {
		memset(n, 0, PROJ_NKIND * sizeof n[0]);
		for (double c = 0; c < v; c++) {
			/* every stage's chunks before c, then stages 0..i-1's chunk c */
			double start = chunks_before(f, v, 1, c) + chunks_before(l, v, 0, c) +
				       (pp - 2) * chunks_before(m, v, 0, c), part[PROJ_NKIND];

			if (i >= 1)
				start += chunk_len(f, v, 1, c) + (i - 1) * chunk_len(m, v, 0, c);
			proj_kinds_in(sc, start, start + chunk_len(Li, v, i == 0, c), part);
			for (int k = 0; k < PROJ_NKIND; k++)
				n[k] += part[k];
		}
	}
	if (i == pp - 1)
		n[proj_main_kind(sc)] += sc->mtp_layers;
}

void proj_stage_mix(const cvc_proj_scenario *sc, const double fml[3], double i, double *layers,
		    double *nmain)
{
	double n[PROJ_NKIND];

	proj_stage_kinds(sc, fml, i, n);
	*layers = *nmain = 0;
	for (int k = 0; k < PROJ_NKIND; k++) {
		*layers += n[k];
		if (!proj_layers_mixed(sc) || PROJ_KIND_FFN(k) == PROJ_FK_MOE)
			*nmain += n[k];
	}
}

/* A layout's decoder layers on the first rank, the most on a middle one,
 * and on the last (pplayout.c). */
static const char *layout_stages(const cvc_proj_scenario *sc, double *first, double *mid,
				 double *last)
{
	double v, pp = sc->pp, n[PROJ_NKIND], mtp;
	const char *why = sc->pp_layout && sc->pp_layout[0] ? proj_pp_layout_check(sc, &v)
							    : proj_pp_balanced_check(sc);

	if (why)
		return why;
	*mid = 0;
	for (double i = 0; i < pp && i < 1e6; i++) {
		double t = 0;

		proj_pp_layout_rank(sc, i, n, &mtp);
		for (int k = 0; k < PROJ_NKIND; k++)
			t += n[k];
		if (i == 0)
			*first = t;
		else if (i == pp - 1)
			*last = t;
		else
			*mid = fmax(*mid, t);
	}
	if (pp < 3)
		*mid = fmax(*first, *last);
	return NULL;
}

/*
 * Layers per pipeline stage (docs/SCENARIOS.md, "uneven pipeline stages"):
 * first_stage_layers / last_stage_layers as given (Megatron-Core's
 * --decoder-first/last-pipeline-num-layers), the other stages sharing the
 * rest evenly; or, when neither is given and layers do not divide by pp*vpp,
 * Megatron-Core's account-for-embedding / account-for-loss split, which
 * counts the embedding and the loss as one layer each of the first and the
 * last virtual stage (Llama 3 405B: 126 layers on 8 x 8 virtual stages, the
 * first and the last stage one layer fewer); or a layout (pp_layout, or when
 * none of these splits fits the balanced one: pplayout.c), the first, the
 * fullest middle and the last rank's layers.  Returns NULL or why not.
 */
const char *proj_stage_layers(const cvc_proj_scenario *sc, double *first, double *mid,
			      double *last)
{
	double pp = sc->pp, v = sc->vpp >= 1 ? sc->vpp : 1, L = sc->layers;
	double f = sc->first_stage_layers, l = sc->last_stage_layers;

	*first = *mid = *last = L / (pp >= 1 ? pp : 1);
	if (proj_pp_layout_on(sc))
		return layout_stages(sc, first, mid, last);
	if (!(pp > 1)) {
		if (f > 0 || l > 0)
			return "first/last_stage_layers need pp > 1";
		return NULL;
	}
	if (f <= 0 && l <= 0) {
		double chunks = pp * v;

		if (proj_fmod(L, chunks) == 0)
			return NULL;
		if (proj_fmod(L + 2, chunks) == 0 && (L + 2) / chunks >= 1) {
			*mid = (L + 2) / pp;
			*first = *last = *mid - 1;
			return NULL;
		}
		if (proj_fmod(L + 1, chunks) == 0) {
			*first = *mid = (L + 1) / pp;
			*last = *mid - 1;
		}
		return NULL;
	}
	if (f != floor(f) || l != floor(l) || f < 0 || l < 0)
		return "first/last_stage_layers must be whole numbers";
	{
		double given = (f > 0) + (l > 0), rest = L - (f > 0 ? f : 0) - (l > 0 ? l : 0);
		double others = pp - given, each;

		if (rest < 0)
			return "first + last stage layers exceed layers";
		if (others <= 0) {
			if (rest != 0)
				return "first + last stage layers must equal layers with pp = 2";
			each = 0;
		} else {
			each = rest / others;
			if (each != floor(each) || each < 1)
				return "layers left for the other stages do not divide evenly";
		}
		*first = f > 0 ? f : each;
		*last = l > 0 ? l : each;
		*mid = pp > 2 ? each : fmax(*first, *last);
	}
	return NULL;
}

double proj_stage_max_layers(const cvc_proj_scenario *sc)
{
	double f, m, l;

	if (proj_pp_layout_on(sc)) {
		double best = 0, n[PROJ_NKIND], mtp;

		for (double i = 0; i < sc->pp && i < 1e6; i++) {
			double t = 0;

			proj_pp_layout_rank(sc, i, n, &mtp);
			for (int k = 0; k < PROJ_NKIND; k++)
				t += n[k];
			best = fmax(best, t + mtp);
		}
		return best;
	}

	if (proj_stage_layers(sc, &f, &m, &l))
		return sc->layers / sc->pp + sc->mtp_layers;
	return fmax(f, fmax(m, l + sc->mtp_layers));
}

double proj_stage_pick(const cvc_proj_scenario *sc, int i, int *n)
{
	double pp = sc->pp;

	if ((!proj_layers_uniform(sc) || proj_pp_layout_on(sc)) && pp > 1) {
		*n = pp > 1e6 ? 1000000 : (int)pp;
		return i;
	}
	*n = pp > 2 ? 3 : pp > 1 ? 2 : 1;
	return i == 0 ? 0 : i == 1 && pp > 2 ? 1 : pp - 1;
}

void proj_plan_of(const cvc_proj_scenario *sc, struct proj_plan *pl)
{
	double pp = sc->pp >= 1 ? sc->pp : 1;

	pl->why = proj_stage_layers(sc, &pl->fml[0], &pl->fml[1], &pl->fml[2]);
	if (pl->why)
		pl->fml[0] = pl->fml[1] = pl->fml[2] = sc->layers / sc->pp;
	proj_kinds_in(sc, 0, sc->layers, pl->N);
	pl->nord = proj_kinds_order(sc, pl->ord);
	pl->nst = 0;
	if (pl->why || pp > PROJ_PLAN_STAGES || pp != floor(pp) ||
	    (proj_layers_uniform(sc) && !proj_pp_layout_on(sc)))
		return;
	for (int i = 0; i < (int)pp; i++)
		proj_stage_kinds(sc, pl->fml, i, pl->st[i]);
	pl->nst = (int)pp;
}

void proj_plan_stage(const cvc_proj_scenario *sc, const struct proj_plan *pl, double i,
		     double n[PROJ_NKIND])
{
	if (i >= 0 && i < pl->nst && i == floor(i))
		memcpy(n, pl->st[(int)i], sizeof pl->st[0]);
	else
		proj_stage_kinds(sc, pl->fml, i, n);
}

/*
 * The stage holding the most parameters: its layers by kind; with every
 * layer alike, the stage with the most layers.
 */
void proj_heaviest_stage(const cvc_proj_scenario *sc, const struct proj_shape *x,
			 const struct proj_plan *pl, double n[PROJ_NKIND])
{
	struct proj_params one;
	double best = -1;

	memset(n, 0, PROJ_NKIND * sizeof n[0]);
	if ((proj_layers_uniform(sc) && !proj_pp_layout_on(sc)) || pl->why) {
		n[proj_kind_of(sc, 0)] = proj_stage_max_layers(sc);
		return;
	}
	for (double i = 0; i < (sc->pp >= 1 ? sc->pp : 1); i++) {
		double k[PROJ_NKIND];

		proj_plan_stage(sc, pl, i, k);
		proj_params_kinds_n(sc, x, k, pl->N, &one);
		if (one.p_stage > best) {
			best = one.p_stage;
			memcpy(n, k, sizeof k);
		}
	}
}

/* The running shape of a layer pattern read bit by bit. */
struct pattern {
	double n, k, f, last; /* layers, first MoE layer, MoE spacing, last MoE layer */
	const char *why;
};

static void pattern_bit(struct pattern *p, int moe)
{
	double i = p->n++;

	if (p->why)
		return;
	if (moe) {
		if (p->k < 0)
			p->k = i;
		else if (p->f == 0)
			p->f = i - p->last;
		else if (i - p->last != p->f)
			p->why = "MoE layers not evenly spaced";
		p->last = i;
	} else if (p->k >= 0 && p->f > 0 && proj_fmod(i - p->k, p->f) == 0) {
		p->why = "MoE layers not evenly spaced";
	}
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* One "[0, 1, ...]" or "[...]*N" term at *ps. */
static const char *pattern_term(const char **ps, struct pattern *p)
{
	const char *s = skip_space(*ps), *open, *e;
	double reps = 1;

	if (*s != '[')
		return "expected '['";
	open = ++s;
	for (;;) { /* check the list once */
		s = skip_space(s);
		if (*s != '0' && *s != '1')
			return "expected 0 or 1 in the list";
		s = skip_space(s + 1);
		if (*s == ']')
			break;
		if (*s != ',')
			return "expected ',' or ']'";
		s++;
	}
	e = skip_space(s + 1);
	if (*e == '*') {
		char *end;

		reps = strtod(e + 1, &end);
		if (end == e + 1 || reps < 1 || reps > 1e6 || reps != floor(reps))
			return "expected a whole count after '*'";
		e = end;
	}
	for (double r = 0; r < reps && p->n <= 1e6; r++)
		for (const char *c = open; c < s; c++)
			if (*c == '0' || *c == '1')
				pattern_bit(p, *c == '1');
	*ps = e;
	return NULL;
}

const char *proj_parse_layer_pattern(const char *text, double *first_dense, double *freq,
				     double *n, int *other_shape)
{
	struct pattern p = {0, -1, 0, -1, NULL};
	const char *s = skip_space(text), *why;
	int paren = 0;

	*other_shape = 0;
	if (*s == '"' || *s == '\'')
		s++;
	if (*s == '(')
		paren = 1, s++;
	for (;;) {
		if ((why = pattern_term(&s, &p)))
			return why;
		s = skip_space(s);
		if (*s != '+')
			break;
		s++;
	}
	if (paren) {
		if (*s != ')')
			return "expected ')'";
		s = skip_space(s + 1);
	}
	if (*s == '"' || *s == '\'')
		s = skip_space(s + 1);
	if (*s)
		return "unexpected text after the list";
	if (p.n > 1e6)
		return "more than a million layers";
	*other_shape = 1; /* well written, but not a pattern cvc prices */
	if (p.why)
		return p.why;
	if (p.k < 0)
		return "no MoE layer in the list";
	*other_shape = 0;
	*first_dense = p.k;
	*freq = p.f > 0 ? p.f : fmax(1, p.n - p.k);
	*n = p.n;
	return NULL;
}
