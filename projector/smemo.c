/*
 * smemo.c - scenarios evaluated moments ago, kept by what they say, so one
 * that comes back is not priced again.  A sweep over GPU counts compares
 * each point with the same layout at half the GPUs (run.c half_tps), and
 * with the count as the innermost axis, doubling, that half is the point
 * evaluated just before; with intervals each point's five doubled
 * resources are the points of a scale axis.  A hit hands back the result
 * the evaluation gave and counts again the collectives it priced, so the
 * provenance's "priced N times" are what evaluating it again would count
 * (as the layer cache does, evaluate.c).  Beside them the last scenario's
 * stages, which its copies with their hardware scaled share.
 */
#include <stdint.h>
#include <string.h>

#include "proj_internal.h"
#include "ctx.h"

/* The scenario's text fields (study, model, layer_pattern,
 * recompute_modules, pp_layout, gpu, offload_modules), in that order,
 * into f. */
static void texts_of(const cvc_proj_scenario *sc, const char *f[PROJ_SM_NTEXT])
{
	f[0] = sc->study;
	f[1] = sc->model;
	f[2] = sc->layer_pattern;
	f[3] = sc->recompute_modules;
	f[4] = sc->pp_layout;
	f[5] = sc->gpu;
	f[6] = sc->offload_modules;
}

/* sc as a memo's key: its position and text pointers cleared (the text is
 * compared by content beside it), its text fields into f. */
static void key_of(const cvc_proj_scenario *sc, cvc_proj_scenario *key,
		   const char *f[PROJ_SM_NTEXT])
{
	texts_of(sc, f);
	*key = *sc;
	key->index = 0;
	key->study = key->model = key->layer_pattern = NULL;
	key->recompute_modules = key->pp_layout = key->gpu = key->offload_modules = NULL;
}

/* The text fields f as a slot keeps them: each a presence byte and its
 * text with its NUL, into buf; the length, or 0 when they do not fit. */
static size_t text_pack(const char *const f[PROJ_SM_NTEXT], char *buf, size_t cap)
{
	size_t n = 0;

	for (int i = 0; i < PROJ_SM_NTEXT; i++) {
		size_t len = f[i] ? strlen(f[i]) + 1 : 0;

		if (n + 1 + len > cap)
			return 0;
		buf[n++] = f[i] != NULL;
		memcpy(buf + n, f[i] ? f[i] : "", len);
		n += len;
	}
	return n;
}

/* Whether the text fields f are those packed in t. */
static int text_same(const char *const f[PROJ_SM_NTEXT], const char *t)
{
	for (int i = 0; i < PROJ_SM_NTEXT; i++) {
		if (*t++ != (f[i] != NULL))
			return 0;
		if (f[i]) {
			if (strcmp(t, f[i]) != 0)
				return 0;
			t += strlen(t) + 1;
		}
	}
	return 1;
}

/*
 * The slot's hash: the key's 64-bit words in four lanes (a sweep asks it
 * of every scenario; one chain of multiplies would wait on itself), and
 * where the text fields are, not what they say: the same text elsewhere
 * lands in another slot, a miss, never a wrong result.  MurmurHash3's
 * finalizer mixes the lanes.
 */
static uint64_t hash_of(const cvc_proj_scenario *key, const char *const f[PROJ_SM_NTEXT])
{
	const unsigned char *p = (const unsigned char *)key;
	const uint64_t m = 0x100000001b3ull;
	uint64_t a = 1469598103934665603ull, b = a ^ 1, c = a ^ 2, d = a ^ 3, u0, u1, u2, u3, h;
	size_t i = 0, n = sizeof *key;

	for (; i + 32 <= n; i += 32) {
		memcpy(&u0, p + i, 8);
		memcpy(&u1, p + i + 8, 8);
		memcpy(&u2, p + i + 16, 8);
		memcpy(&u3, p + i + 24, 8);
		a = (a ^ u0) * m;
		b = (b ^ u1) * m;
		c = (c ^ u2) * m;
		d = (d ^ u3) * m;
	}
	for (; i + 8 <= n; i += 8) {
		memcpy(&u0, p + i, 8);
		a = (a ^ u0) * m;
	}
	for (int j = 0; j < PROJ_SM_NTEXT; j++)
		b = (b ^ (uint64_t)(uintptr_t)f[j]) * m;
	h = a ^ (b * 0x9e3779b97f4a7c15ull) ^ (c * 0xc2b2ae3d27d4eb4full) ^ (d * 0x165667b19e3779f9ull);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

int proj_smemo_find(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, struct proj_smemo_mark *mk,
		    cvc_proj_result *r)
{
	const struct proj_smemo_slot *s;
	const struct proj_used *u = &ctx->used;
	const char *f[PROJ_SM_NTEXT];

	/* the numbers byte for byte (padding too: two scenarios that differ
	 * only there miss, which costs an evaluation, never a wrong result),
	 * the text by its content */
	key_of(sc, &mk->key, f);
	mk->hash = hash_of(&mk->key, f);
	mk->sc = sc;
	s = &ctx->sm.e[mk->hash % PROJ_SM_SLOTS];
	if (s->full && s->hash == mk->hash && memcmp(&s->key, &mk->key, sizeof mk->key) == 0 &&
	    text_same(f, s->text)) {
		for (int i = 0; i < s->nnotes; i++)
			ctx->used.e[s->notes[i].entry].calls += s->notes[i].calls;
		*r = s->r;
		return 1;
	}
	mk->n0 = u->n;
	mk->dropped = u->dropped;
	for (int i = 0; i < u->n; i++)
		mk->before[i] = u->e[i].calls;
	return 0;
}

void proj_smemo_keep(cvc_proj_ctx *ctx, const struct proj_smemo_mark *mk,
		     const cvc_proj_result *r)
{
	struct proj_smemo_slot *s;
	const struct proj_used *u = &ctx->used;
	int nnotes = 0;
	const char *f[PROJ_SM_NTEXT];

	if (u->dropped != mk->dropped)
		return;
	s = &ctx->sm.e[mk->hash % PROJ_SM_SLOTS];
	s->full = 0;
	texts_of(mk->sc, f);
	if (!text_pack(f, s->text, sizeof s->text))
		return; /* text longer than a slot keeps: not kept */
	for (int i = 0; i < u->n; i++) {
		double d = u->e[i].calls - (i < mk->n0 ? mk->before[i] : 0);

		if (d <= 0)
			continue;
		if (nnotes == PROJ_SM_NOTES)
			return; /* more collectives than a slot keeps: not kept */
		s->notes[nnotes].entry = i;
		s->notes[nnotes++].calls = d;
	}
	s->nnotes = nnotes;
	s->hash = mk->hash;
	s->key = mk->key;
	s->r = *r;
	s->full = 1;
}

void proj_smemo_clear(cvc_proj_ctx *ctx)
{
	for (int i = 0; i < PROJ_SM_SLOTS; i++)
		ctx->sm.e[i].full = 0;
	ctx->stm.full = 0;
}

/* A plan's figures and the stages it keeps (not all PROJ_PLAN_STAGES). */
static void plan_copy(struct proj_plan *d, const struct proj_plan *s)
{
	d->why = s->why;
	memcpy(d->fml, s->fml, sizeof d->fml);
	memcpy(d->N, s->N, sizeof d->N);
	memcpy(d->ord, s->ord, sizeof d->ord);
	d->nord = s->nord;
	d->nst = s->nst;
	memcpy(d->st, s->st, (size_t)s->nst * sizeof s->st[0]);
}

/*
 * What the pipeline stages hold is the model's and the layout's, not the
 * hardware's: with intervals each scenario is evaluated again with each of
 * five resources doubled (run.c gains()), the same stages five times.
 * The key is the scenario with its scale factors, position and text
 * pointers cleared, the text compared by content, as above.
 */
void proj_smemo_stages(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc, const struct proj_shape *x,
		       struct proj_plan *pl, double heavy[PROJ_NKIND])
{
	struct proj_stmemo *s = &ctx->stm;
	const char *f[PROJ_SM_NTEXT];
	cvc_proj_scenario key;

	if (ctx->no_intervals) { /* no upgrade gains: the next scenario is another */
		proj_plan_of(sc, pl);
		proj_heaviest_stage(sc, x, pl, heavy);
		return;
	}
	key_of(sc, &key, f);
	key.scale_compute = key.scale_hbm_bw = key.scale_hbm_cap = 0;
	key.scale_intra_bw = key.scale_inter_bw = 0;
	if (s->full && memcmp(&s->key, &key, sizeof key) == 0 && text_same(f, s->text)) {
		plan_copy(pl, &s->pl);
		memcpy(heavy, s->heavy, sizeof s->heavy);
		return;
	}
	proj_plan_of(sc, pl);
	proj_heaviest_stage(sc, x, pl, heavy);
	s->full = 0;
	if (!text_pack(f, s->text, sizeof s->text))
		return;
	s->key = key;
	plan_copy(&s->pl, pl);
	memcpy(s->heavy, heavy, sizeof s->heavy);
	s->full = 1;
}
