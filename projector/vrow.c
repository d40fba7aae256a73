/*
 * vrow.c - one row of a measured-runs table read as a scenario.  Published
 * tables are transcribed by hand: cells carry units and remarks in free
 * text ("H100-SXM-80GB (DGX H100-class cluster)", "bf16 (amp)", "FSDP
 * FULL_SHARD (ZeRO-3)", "14336 per expert"), a '?' marks a transcriber's
 * guess, and empty cells mean "not published".  Each kind of cell has its
 * grammar (vcell.c numbers, vtext.c sharding / dtype / recompute words,
 * vgpu.c hardware, vfield.c scenario fields); the stack and era the
 * row's text names fill what it does not say (vstack.c, vdefault.c).
 * Every value not read verbatim is said in the row's `assumed` text; a
 * cell that cannot be read leaves that row unprojected with the reason,
 * never the file (docs/SCENARIOS.md, "validate").
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_model.h"
#include "ctx.h"
#include "proj_internal.h"
#include "vrow.h"

/* Appends "; " and the note; a note past the room cuts the notes there and
 * says so (VROW_NOTES_CUT), so a planner never reads a cut note as whole.
 * The room leaves space for the mark. */
static void vnote(struct vrow *r, const char *fmt, va_list ap)
{
	const size_t room = sizeof r->assumed - sizeof VROW_NOTES_CUT;
	size_t n = strlen(r->assumed), n0 = n;
	int k;

	if (n > room)
		return; /* already cut */
	if (n) {
		if (n + 2 >= room)
			goto cut;
		memcpy(r->assumed + n, "; ", 3);
		n += 2;
	}
	k = vsnprintf(r->assumed + n, room - n, fmt, ap);
	if (k < 0) {
		r->assumed[n0] = 0;
		return;
	}
	if ((size_t)k < room - n)
		return;
	n = room - 1;
cut:
	memcpy(r->assumed + n, VROW_NOTES_CUT, sizeof VROW_NOTES_CUT);
}

void vrow_note(struct vrow *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnote(r, fmt, ap);
	va_end(ap);
}

void vrow_assume(struct vrow *r, const char *fmt, ...)
{
	va_list ap;
	char what[512];

	va_start(ap, fmt);
	if (!r->strict) {
		vnote(r, fmt, ap);
	} else if (!r->why[0]) {
		vsnprintf(what, sizeof what, fmt, ap);
		vrow_cannot(r, CVC_PROJ_VWHY_STRICT, "--strict: the row does not state %s", what);
	}
	va_end(ap);
}

int vrow_cannot(struct vrow *r, int kind, const char *fmt, ...)
{
	va_list ap;

	if (r->why[0])
		return 1;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	r->kind = kind;
	return 1;
}

const char *cvc_proj_vwhy_name(int why)
{
	static const char *const names[CVC_PROJ_VWHY_N] = {
		"row", "cell", "layout or shape missing", "hardware", "not modelled",
		"invalid scenario", "no comparable figure", "strict",
	};

	return why >= 0 && why < CVC_PROJ_VWHY_N ? names[why] : "";
}

/* Cells that mean "not published". */
static int is_empty(const char *s)
{
	return !*s || !strcmp(s, "-") || !strcmp(s, "?") || !strcmp(s, "\xE2\x80\x94") ||
	       !strcmp(s, "\xE2\x80\x93") || !strcasecmp(s, "n/a") || !strcasecmp(s, "na") ||
	       !strcasecmp(s, "none given") || !strcasecmp(s, "not published") ||
	       !strcasecmp(s, "unknown") || !strcasecmp(s, "tbd") || !strcasecmp(s, "n.a.");
}

/*
 * Copies cell into buf trimmed, without a trailing '?' (then *guess = 1).
 * Returns buf.
 */
static char *clean(const char *cell, char *buf, size_t len, int *guess)
{
	size_t n;

	while (isspace((unsigned char)*cell))
		cell++;
	snprintf(buf, len, "%s", cell);
	n = strlen(buf);
	while (n && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	*guess = 0;
	if (n > 1 && buf[n - 1] == '?') {
		buf[--n] = 0;
		*guess = 1;
		while (n && isspace((unsigned char)buf[n - 1]))
			buf[--n] = 0;
	}
	return buf;
}

/* A header name as a column key: trimmed, lower case, ' ' and '-' as '_'
 * ("Global Batch" -> "global_batch"). */
static void key_of(const char *name, char *k, size_t len)
{
	size_t o = 0;

	while (isspace((unsigned char)*name))
		name++;
	for (; *name && o + 1 < len; name++)
		k[o++] = *name == ' ' || *name == '-' ? '_' : (char)tolower((unsigned char)*name);
	while (o && k[o - 1] == '_')
		o--;
	k[o] = 0;
}

int vrow_columns(struct vrow_map *map, char **names, size_t n)
{
	map->n = n;
	map->has_gpu = map->has_dtype = 0;
	map->has_measured = 0;
	for (size_t c = 0; c < n; c++) {
		char k[128];
		struct vcol *col = &map->col[c];

		key_of(names[c], k, sizeof k);
		col->field = -1;
		col->role = V_CARRY;
		if (!strcmp(k, "tokens_per_s_per_gpu"))
			col->role = V_TPS;
		else if (!strcmp(k, "iter_s") || !strcmp(k, "step_s"))
			col->role = V_ITER;
		else if (!strcmp(k, "tflops_per_gpu"))
			col->role = V_TFLOPS;
		else if (!strcmp(k, "mfu_pct"))
			col->role = V_MFU;
		else if (!strcmp(k, "flops_convention") || !strcmp(k, "flop_convention"))
			col->role = V_CONV;
		else if (!strcmp(k, "zero_fsdp") || !strcmp(k, "zero") || !strcmp(k, "fsdp") ||
			 !strcmp(k, "sharding"))
			col->role = V_ZERO;
		else if (!strcmp(k, "gpu"))
			col->role = V_GPU;
		else if (!strcmp(k, "network") || !strcmp(k, "interconnect") || !strcmp(k, "nic"))
			col->role = V_NET;
		else if (!strcmp(k, "dtype") || !strcmp(k, "precision"))
			col->role = V_DTYPE;
		else if (!strcmp(k, "recompute"))
			col->role = V_RECOMP;
		else if (!strcmp(k, "source") || !strcmp(k, "notes"))
			col->role = V_TEXT;
		else if ((col->field = proj_field_find(NULL, k)) >= 0)
			col->role = V_FIELD;
		col->notes = !strcmp(k, "notes");
		if (col->role == V_GPU)
			map->has_gpu = 1;
		if (col->role == V_DTYPE)
			map->has_dtype = 1;
		if (col->role >= V_TPS && col->role <= V_MFU)
			map->has_measured = 1;
	}
	return 0;
}

int vrow_fid(struct vrow *r, const char *key)
{
	int f;

	for (int i = 0; i < r->nfid; i++)
		if (r->fid_key[i] == key)
			return r->fid[i];
	f = proj_field_find(NULL, key);
	if (r->nfid < (int)(sizeof r->fid / sizeof r->fid[0])) {
		r->fid_key[r->nfid] = key;
		r->fid[r->nfid++] = f;
	}
	return f;
}

int vrow_given(const struct vrow *r, int f)
{
	for (int i = 0; i < r->ngiven; i++)
		if (r->given[i] == f)
			return 1;
	return 0;
}

void vrow_mark(struct vrow *r, int f)
{
	if (f >= 0 && !vrow_given(r, f) &&
	    r->ngiven < (int)(sizeof r->given / sizeof r->given[0]))
		r->given[r->ngiven++] = f;
}

void vrow_start(struct vrow *r, int legacy, int default_conv)
{
	cvc_proj_scenario *sc = &r->sc;

	cvc_proj_scenario_default(sc);
	sc->study = "validate";
	sc->model = "";
	r->name[0] = r->gpu[0] = r->rcmods[0] = r->ofmods[0] = 0;
	r->assumed[0] = r->why[0] = 0;
	r->kind = CVC_PROJ_VWHY_INVALID;
	r->regressed = 0;
	r->ran = -1;
	r->ngiven = 0;
	r->tps = r->iter = r->tflops = r->mfu = NAN;
	r->conv = default_conv;
	r->net_gbps = 0;
	r->hybrid = 0;
	r->has_measured = 0;
	r->text[0] = 0;
	r->notes_at = r->notes_len = 0;
	memset(&r->g, 0, sizeof r->g);
	memset(&r->stack, 0, sizeof r->stack);
	if (legacy) {
		/* Megatron-LM 2021 (Narayanan et al.): what its tables measured */
		sc->dtype = CVC_PROJ_FP16;
		sc->attention = CVC_PROJ_ATTN_UNFUSED;
		sc->recompute = CVC_PROJ_RECOMP_FULL;
		sc->dp_overlap = 0;
		sc->tp_overlap = 0;
		sc->dropout = 1;
		r->conv = PROJ_FLOPS_MEGATRON_2021;
		vrow_note(r, "Megatron-LM 2021 table (no gpu or dtype column): A100-SXM-80GB, fp16, "
			     "unfused attention, full recompute, no DP or TP overlap, TFLOP/s as "
			     "Narayanan et al. eq. 3");
	}
}

/* The unit a measured cell's remark names, applied to *v: a step in "ms"
 * or "min", TFLOP/s written "PFLOP/s".  Returns 1 when one was. */
static int measured_unit(enum vrole role, const char *remark, double *v)
{
	char w[64];

	vtext_lower(w, sizeof w, remark);
	if (role == V_ITER && vtext_has(w, "ms|msec|millisecond|milliseconds")) {
		*v /= 1e3;
		return 1;
	}
	if (role == V_ITER && vtext_has(w, "min|minute|minutes")) {
		*v *= 60;
		return 1;
	}
	if (role == V_TFLOPS && vtext_has(w, "pflop/s|pflops|pflop")) {
		*v *= 1e3;
		return 1;
	}
	if (role == V_TFLOPS && vtext_has(w, "gflop/s|gflops|gflop")) {
		*v /= 1e3;
		return 1;
	}
	return 0;
}

/* A measured figure (role V_TPS .. V_MFU), within what a GPU can do:
 * tokens/s below 1e9, a step from 1 us to 1e7 s, TFLOP/s below 1e6, MFU
 * above 0 and at most 100%. */
static int read_measured(struct vrow *r, enum vrole role, const char *k, const char *t,
			 int guess)
{
	static const struct {
		double lo, hi;
		const char *what;
	} range[] = {
		[V_TPS] = {0, 1e9, "a number of tokens/s above 0 and below 1e9"},
		[V_ITER] = {1e-6, 1e7, "a step time from 1e-6 to 1e7 s"},
		[V_TFLOPS] = {0, 1e6, "a TFLOP/s figure above 0 and below 1e6"},
		[V_MFU] = {0, 100, "an MFU above 0 and at most 100 (%)"},
	};
	struct vnum n;
	const char *what;
	double v;

	r->has_measured = 1;
	if (vcell_number(t, r->decimal_comma, &n, &what))
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected %s)", k, t,
				   what);
	v = n.v;
	if (n.unit == 'K' || n.unit == 'M')
		v *= n.unit == 'K' ? 1e3 : 1e6;
	if (measured_unit(role, n.remark, &v) || n.unit == 'K' || n.unit == 'M' || n.grouped)
		vrow_note(r, "measured %s=%g ('%s')", k, v, t);
	/* an MFU written as a fraction ("0.45"): no training run uses under 1%
	 * of its GPU, so a figure of at most 1 is read as a fraction, said */
	if (role == V_MFU && v > 0 && v <= 1 && n.unit != '%') {
		v *= 100;
		vrow_assume(r, "measured %s=%g ('%s' read as a fraction)", k, v, t);
	}
	if (!(v > range[role].lo) || v > range[role].hi || (role == V_ITER && v < range[role].lo))
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected %s)", k, t,
				   range[role].what);
	if (role == V_TPS)
		r->tps = v;
	else if (role == V_ITER)
		r->iter = v;
	else if (role == V_TFLOPS)
		r->tflops = v;
	else
		r->mfu = v;
	if (guess || n.guess)
		vrow_assume(r, "measured %s=%g (guess%s%s)", k, v, n.remark[0] ? ": " : "",
			    n.remark);
	else if (n.approx || n.bound)
		vrow_assume(r, "measured %s=%g ('%s': %s)", k, v, t,
			    n.approx ? "approximate" : "a bound");
	else if (n.remark[0])
		vrow_note(r, "measured %s=%g ('%s')", k, v, t);
	return 0;
}

/* The dtype cell: cvc's dtype and, for fp8, its recipe. */
static int read_dtype(struct vrow *r, const char *k, const char *t, int guess)
{
	struct vdtype d;
	int fd = vrow_fid(r, "dtype"), fr = vrow_fid(r, "fp8_recipe");
	const char *name;
	int v;

	if (vtext_dtype(t, &d))
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected a dtype: "
				   "bf16, fp16, fp32, fp8 with its recipe, nvfp4, mxfp4)", k, t);
	name = d.dtype;
	if (!strcmp(name, "fp4")) {
		name = "nvfp4";
		vrow_assume(r, "dtype=nvfp4 ('%s': FP4 with no scaling named, NVIDIA's NVFP4)", t);
	}
	r->g.dtype = 1;
	snprintf(r->g.dtype_cell, sizeof r->g.dtype_cell, "%.*s",
		 (int)sizeof r->g.dtype_cell - 1, t);
	if ((v = proj_enum_index(proj_fields[fd].names, name)) < 0) {
		r->g.dtype_name = name; /* not priced: the defaults say so */
		return 0;
	}
	r->sc.dtype = v;
	if (strcmp(t, name))
		vrow_note(r, "dtype=%s ('%s')", name, t);
	else if (v == CVC_PROJ_NVFP4 || v == CVC_PROJ_MXFP4) /* 4-bit: the reading said */
		vrow_note(r, "dtype=%s", name);
	if (d.recipe) {
		if ((v = proj_enum_index(proj_fields[fr].names, d.recipe)) < 0)
			return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED, "fp8 recipe '%s' ('%s') is "
					   "none cvc prices (%s)", d.recipe, t, proj_fields[fr].names);
		r->sc.fp8_recipe = v;
		r->g.recipe = 1;
		vrow_note(r, "fp8_recipe=%s ('%s')", d.recipe, t);
	}
	if (guess) {
		r->g.dtype_guess = 1;
		vrow_assume(r, "dtype=%s (guess)", name);
	}
	return 0;
}

int vrow_recompute_open(struct vrow *r)
{
	int fm = vrow_fid(r, "recompute_modules");

	return !r->g.recompute && vrow_fid(r, "recompute") >= 0 && fm >= 0 && !vrow_given(r, fm);
}

void vrow_set_recompute(struct vrow *r, int kind, const char *modules)
{
	r->sc.recompute = kind;
	r->g.recompute = 1;
	vrow_mark(r, vrow_fid(r, "recompute"));
	if (modules) {
		snprintf(r->rcmods, sizeof r->rcmods, "%s", modules);
		r->sc.recompute_modules = r->rcmods;
		vrow_mark(r, vrow_fid(r, "recompute_modules"));
	}
}

/* The recompute cell, with the modules a selective recompute names. */
static int read_recompute(struct vrow *r, const char *k, const char *t, int guess)
{
	struct vrecompute rc;
	int f = vrow_fid(r, "recompute_modules"), mask;
	char bad[80];

	if (vtext_recompute(t, &rc))
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected none, "
				   "selective or full, or the modules recomputed)", k, t);
	r->sc.recompute = rc.kind;
	r->g.recompute = 1;
	if (!rc.modules[0] && strcmp(t, rc.kind == CVC_PROJ_RECOMP_FULL ? "full" :
				      rc.kind == CVC_PROJ_RECOMP_NONE ? "none" : "selective"))
		vrow_note(r, "recompute=%s ('%s')", rc.kind == CVC_PROJ_RECOMP_FULL ? "full" :
			  rc.kind == CVC_PROJ_RECOMP_NONE ? "none" : "selective", t);
	if (rc.modules[0] && !vrow_given(r, f) &&
	    !proj_recompute_modules(rc.modules, &mask, bad, sizeof bad)) {
		snprintf(r->rcmods, sizeof r->rcmods, "%s", rc.modules);
		r->sc.recompute_modules = r->rcmods;
		vrow_mark(r, f);
		vrow_note(r, "recompute=selective, recompute_modules=%s ('%s')", rc.modules, t);
	}
	if (guess)
		vrow_assume(r, "recompute='%s' (guess)", t);
	return 0;
}

/* vgpu_read() through the row reader's memo of recent cells. */
static int vgpu_memo(struct vrow *r, const cvc_hw_catalog *cat, const char *t, double gpn,
		     struct vgpu *g)
{
	const int n = (int)(sizeof r->hwmemo / sizeof r->hwmemo[0]);
	int slot;

	if (strlen(t) >= sizeof r->hwmemo[0].cell)
		return vgpu_read(cat, t, gpn, g);
	for (int i = 0; i < n && i < r->nhw; i++)
		if (r->hwmemo[i].gpn == gpn && !strcmp(r->hwmemo[i].cell, t)) {
			*g = r->hwmemo[i].g;
			return r->hwmemo[i].rc;
		}
	slot = r->nhw++ % n;
	snprintf(r->hwmemo[slot].cell, sizeof r->hwmemo[slot].cell, "%s", t);
	r->hwmemo[slot].gpn = gpn;
	r->hwmemo[slot].rc = vgpu_read(cat, t, gpn, &r->hwmemo[slot].g);
	*g = r->hwmemo[slot].g;
	return r->hwmemo[slot].rc;
}

/* The gpu cell (or a network column): the catalog GPU named anywhere in it,
 * its NVLink domain, node and link rates (vgpu.c). */
static int read_gpu(struct vrow *r, enum vrole role, const char *t, int guess,
		    cvc_proj_ctx *ctx)
{
	struct vgpu g;
	double gpn = r->sc.gpus_per_node >= 1 ? r->sc.gpus_per_node : 8;

	if (vgpu_memo(r, ctx->cat, t, gpn, &g) && role == V_GPU)
		return vrow_cannot(r, CVC_PROJ_VWHY_HARDWARE,
				   "gpu '%s' names no GPU of the hardware catalog", t);
	if (role == V_NET) {
		/* the rates only; the gpu cell's own rates win */
		if (!(r->g.hw.nic_gbps > 0))
			r->g.hw.nic_gbps = g.nic_gbps, r->g.hw.nic_how = g.nic_how,
			r->g.hw.nic_assumed = g.nic_assumed;
		if (!(r->g.hw.nvlink_gbps > 0))
			r->g.hw.nvlink_gbps = g.nvlink_gbps,
			r->g.hw.nvlink_assumed = g.nvlink_assumed;
		memcpy(r->g.hw.nic_text, g.nic_text, sizeof g.nic_text);
		r->g.has_net = 1;
		return 0;
	}
	snprintf(r->gpu, sizeof r->gpu, "%s", g.spec->name);
	r->sc.gpu = r->gpu;
	r->g.gpu = 1;
	if (g.variant_of[0])
		vrow_note(r, "gpu=%s ('%s': %s with the %.0f GB the cell states)", g.spec->name, t,
			  g.variant_of, g.mem_gb);
	else if (g.in_paren)
		vrow_assume(r, "gpu=%s ('%s': the GPU named in parentheses)", g.spec->name, t);
	else if (strcmp(t, g.spec->name) || guess)
		(guess ? vrow_assume : vrow_note)(r, "gpu=%s ('%s'%s)", g.spec->name, t,
						  guess ? ", guess" : "");
	if (r->g.has_net) {
		g.nic_gbps = g.nic_gbps > 0 ? g.nic_gbps : r->g.hw.nic_gbps;
		g.nvlink_gbps = g.nvlink_gbps > 0 ? g.nvlink_gbps : r->g.hw.nvlink_gbps;
	}
	/* a stated power limit is priced only through a catalog entry that
	 * has it (the sustained clock follows tdp_w, docs/MODELS.md "Clocks") */
	if (g.power_w > 0 && fabs(g.power_w - g.spec->tdp_w) >= 1)
		vrow_assume(r, "power %.0f W ('%s') not priced: %s at its catalog %.0f W", g.power_w,
			    t, g.spec->name, g.spec->tdp_w);
	r->g.hw = g;
	r->g.has_hw = 1;
	return 0;
}

/* One cell t (cleaned, not empty) of column k: 0, or 1 (not projected). */
static int read_cell(struct vrow *r, const struct vcol *col, const char *k, const char *t,
		     int guess, cvc_proj_ctx *ctx)
{
	switch (col->role) {
	case V_TPS:
	case V_ITER:
	case V_TFLOPS:
	case V_MFU:
		return read_measured(r, col->role, k, t, guess);
	case V_CONV: {
		char w[64];
		int cv;

		vtext_lower(w, sizeof w, t);
		if ((cv = proj_flops_parse(w)) < 0)
			return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected a FLOP "
					   "convention: %s)", k, t, proj_flops_names());
		r->conv = cv;
		return 0;
	}
	case V_ZERO:
		if (vtext_sharding(t, &r->g.shard))
			return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected a ZeRO "
					   "stage 0-3, DDP, or an FSDP / ZeRO / distributed optimizer "
					   "wording)", k, t);
		r->g.has_shard = 1;
		snprintf(r->g.shard_cell, sizeof r->g.shard_cell, "%.*s",
			 (int)sizeof r->g.shard_cell - 1, t);
		if (r->g.shard.offload)
			return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED, "sharding '%s' offloads to the "
					   "host, which cvc does not price", t);
		if (guess)
			vrow_assume(r, "sharding '%s' (guess)", t);
		return 0;
	case V_GPU:
	case V_NET:
		return read_gpu(r, col->role, t, guess, ctx);
	case V_DTYPE:
		return read_dtype(r, k, t, guess);
	case V_RECOMP:
		return read_recompute(r, k, t, guess);
	case V_FIELD:
		return vrow_field(r, col->field, k, t, guess);
	default:
		return 0;
	}
}

/*
 * The attention kernel a row's free text (its source and notes, lower
 * case) names, when no attention column said: a FlashAttention version
 * named anywhere; else llm-foundry's `attn_impl: flash` without a version,
 * which ran flash-attn 1.x: its `gpu` extra pinned flash-attn 1.0.x until
 * llm-foundry 0.6.0 (2024-03, PR #1023; FlashAttention-2 only through the
 * `gpu-flash2` extra, allowed in MPT from 2023-10, PR #672), and MosaicML's
 * benchmark scripts install that extra (docs/SCENARIOS.md).
 */
static void attention_from_text(struct vrow *r, const char *t)
{
	static const char *const versions[] = {"fa4", "fa2", "fa1"};
	int f = vrow_fid(r, "attention");

	if (f < 0 || vrow_given(r, f) || !*t)
		return;
	/* the FlashAttention versions only: the unversioned words ("flash",
	 * "fused") say nothing a default does not */
	int v = vrow_enum_words_lower("attention", t);

	for (size_t j = 0; j < sizeof versions / sizeof versions[0]; j++) {
		if (v < 0 || v != proj_enum_index(proj_fields[f].names, versions[j]))
			continue;
		r->sc.attention = v;
		vrow_mark(r, f);
		vrow_note(r, "attention=%s (named in the row's text)", versions[j]);
		return;
	}
	if (vtext_has(t, "llm-foundry|llm_foundry|llm foundry") && strstr(t, "flash")) {
		r->sc.attention = CVC_PROJ_ATTN_FA1;
		vrow_mark(r, f);
		vrow_note(r, "attention=fa1 (llm-foundry's attn_impl flash: flash-attn 1.x, its gpu "
			     "extra before llm-foundry 0.6.0)");
	}
}

int vrow_read(struct vrow *r, const struct vrow_map *map, char **names, char **cells,
	      cvc_proj_ctx *ctx, int legacy)
{
	cvc_proj_scenario *sc = &r->sc;
	char buf[512];

	/* the text first: the stack it names decides what other cells mean */
	for (size_t c = 0; c < map->n; c++) {
		size_t n = strlen(r->text);

		if (map->col[c].role == V_TEXT) {
			snprintf(r->text + n, sizeof r->text - n, "%s ", cells[c]);
			if (!r->notes_len && map->col[c].notes) {
				r->notes_at = n;
				r->notes_len = strlen(r->text) - n;
			}
		}
		/* what counts as a row carrying a measurement, read or not */
		if (map->col[c].role >= V_TPS && map->col[c].role <= V_MFU) {
			int guess;

			r->has_measured |= !is_empty(clean(cells[c], buf, sizeof buf, &guess));
		}
	}
	vtext_lower(r->text, sizeof r->text, r->text);
	vstack_read(r->text, &r->stack);
	for (size_t c = 0; c < map->n; c++) {
		int guess = 0;
		char *t;

		if (map->col[c].role == V_CARRY || map->col[c].role == V_TEXT)
			continue;
		t = clean(cells[c], buf, sizeof buf, &guess);
		if (is_empty(t))
			continue;
		if (read_cell(r, &map->col[c], names[c], t, guess, ctx))
			return 1;
	}
	/* a model cvc's catalog knows by name fills what the row leaves blank */
	vrow_catalog(r);
	/* the shape a table's header promises, per row: a row that leaves one
	 * out is a model cvc cannot guess */
	if (!legacy)
		for (size_t i = 0; i < 3; i++) {
			static const char *const shape[] = {"layers", "hidden", "heads"};

			if (!vrow_given(r, vrow_fid(r, shape[i])))
				return vrow_cannot(r, CVC_PROJ_VWHY_MISSING,
						   "the model's shape not given (%s)", shape[i]);
		}
	if (!vrow_given(r, vrow_fid(r, "global_batch")) && !(r->g.batch_tokens > 0))
		return vrow_cannot(r, CVC_PROJ_VWHY_MISSING, "global_batch not given");
	/* a 3D tensor-parallel grid (tp_row, tp_col, tp_depth) is a layout too */
	if (!r->g.tp && !r->g.pp && !legacy && !proj_is_3d(sc))
		return vrow_cannot(r, CVC_PROJ_VWHY_MISSING,
				   "layout not given (tp, pp; or tp_row, tp_col, tp_depth)");
	if (!legacy)
		attention_from_text(r, r->text);
	if (vrow_defaults(r, ctx, legacy))
		return 1;
	/* the GPU count (its cell, or the gpu text's "512x H100") belongs to
	   the layout: without it the row is as incomplete as one without tp,
	   not an invalid scenario */
	if (!legacy && !(sc->gpus > 0) && !(sc->nodes > 0) && !(sc->dp > 0))
		return vrow_cannot(r, CVC_PROJ_VWHY_MISSING,
				   "the GPU count not given (gpus, nodes or dp)");
	return r->why[0] ? 1 : 0;
}
