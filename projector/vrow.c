/*
 * vrow.c - one row of a measured-runs table read as a scenario.  Published
 * tables are transcribed by hand: cells carry units and remarks in free
 * text ("H100-SXM-80GB (DGX H100-class cluster)", "bf16 (amp)", "FSDP
 * FULL_SHARD (ZeRO-3)"), a trailing '?' marks a transcriber's guess, and
 * empty cells mean "not published".  The rules here turn such a row into a
 * scenario and say, in the row's `assumed` text, every default filled and
 * every guess used (docs/SCENARIOS.md, "validate").
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

void vrow_note(struct vrow *r, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(r->assumed);
	int k;

	if (n + 3 >= sizeof r->assumed)
		return;
	if (n) {
		memcpy(r->assumed + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	k = vsnprintf(r->assumed + n, sizeof r->assumed - n, fmt, ap);
	va_end(ap);
	if (k < 0)
		r->assumed[n] = 0;
}

/* Cells that mean "not published". */
static int is_empty(const char *s)
{
	return !*s || !strcmp(s, "-") || !strcmp(s, "?") || !strcasecmp(s, "n/a") ||
	       !strcasecmp(s, "na") || !strcasecmp(s, "none given");
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

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* Text before '(' (trimmed), and the text inside the parentheses. */
static void split_paren(const char *s, char *head, size_t hlen, char *paren, size_t plen)
{
	const char *o = strchr(s, '(');
	size_t n = o ? (size_t)(o - s) : strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= hlen)
		n = hlen - 1;
	memcpy(head, s, n);
	head[n] = 0;
	paren[0] = 0;
	if (o) {
		const char *c = strchr(o, ')');
		size_t m = c ? (size_t)(c - o - 1) : strlen(o + 1);

		if (m >= plen)
			m = plen - 1;
		memcpy(paren, o + 1, m);
		paren[m] = 0;
	}
}

/* A lower-case copy of text in t (len bytes: longer text is cut). */
static void lower_copy(char *t, size_t len, const char *text)
{
	snprintf(t, len, "%.*s", (int)len - 1, text);
	lower(t);
}

/*
 * Whether t matches one of the '|'-separated words: contains it, or, for
 * a word written "=word", is it.  Free text names its choice anywhere
 * ("FSDP FULL_SHARD (ZeRO-3)"), but short words ("no", "on") only count
 * as the whole cell.
 */
static int any_word(const char *t, const char *words)
{
	while (*words) {
		const char *bar = strchr(words, '|');
		size_t n = bar ? (size_t)(bar - words) : strlen(words);
		int exact = words[0] == '=';
		char w[64];

		snprintf(w, sizeof w, "%.*s", (int)(n - (size_t)exact), words + exact);
		if (exact ? !strcmp(t, w) : strstr(t, w) != NULL)
			return 1;
		words += n + (bar ? 1 : 0);
	}
	return 0;
}

/* What a free-text cell names. */
enum wkind {
	W_DTYPE, W_ZERO, W_RECOMPUTE, W_FRAMEWORK, W_ATTENTION, W_FFN, W_OPT, W_FP8R, W_DISPATCH
};

/* The words (any_word()) that name a value, by kind; the first rule of a
 * kind that matches wins, so the order settles overlaps ("bfloat16" holds
 * "float16"). */
static const struct word_rule {
	enum wkind kind;
	int value;
	const char *words;
} word_rules[] = {
	/* dtype: "bf16 (amp)", "BF16", "bfloat16", "fp8 (delayed)", "FP8-MX" */
	{W_DTYPE, CVC_PROJ_FP8, "fp8|float8|e4m3"},
	{W_DTYPE, CVC_PROJ_BF16, "bf16|bfloat16"},
	{W_DTYPE, CVC_PROJ_FP16, "fp16|float16|half"},
	{W_DTYPE, CVC_PROJ_FP32, "fp32|tf32|float32"},
	/* ZeRO stage from FSDP / ZeRO / Megatron wording */
	{W_ZERO, 3, "zero-3|zero3|zero 3|full_shard|full shard|hybrid_shard"},
	{W_ZERO, 2, "zero-2|zero2|zero 2|shard_grad_op|grad_op"},
	{W_ZERO, 1, "zero-1|zero1|zero 1|distributed optimizer|distopt|dist-opt|dist_opt"},
	{W_ZERO, 3, "fsdp"}, /* FSDP's default strategy is FULL_SHARD */
	{W_ZERO, 0, "no_shard|ddp|none|zero-0"},
	{W_RECOMPUTE, CVC_PROJ_RECOMP_SELECTIVE, "selective|core attention"},
	{W_RECOMPUTE, CVC_PROJ_RECOMP_FULL, "full|block|uniform|=true|=yes|=on"},
	{W_RECOMPUTE, CVC_PROJ_RECOMP_NONE, "none|=no|=false|=off|=0"},
	/* the stack: Megatron's fused kernels (NeMo, Megatron-Bridge,
	 * Megatron-DeepSpeed) or eager PyTorch (FSDP, DeepSpeed, torchtitan,
	 * llm-foundry); JAX/XLA stacks match neither */
	{W_FRAMEWORK, CVC_PROJ_FW_MEGATRON, "megatron|nemo|mcore|m-core"},
	{W_FRAMEWORK, CVC_PROJ_FW_PYTORCH,
	 "pytorch|torch|fsdp|titan|foundry|composer|deepspeed|accelerate|lightning|hugging|"
	 "transformers|=ddp|colossal|fairscale"},
	/* attention: "FlashAttention-2", "cuDNN (TE)", "SDPA", "FA3", "eager" */
	{W_ATTENTION, CVC_PROJ_ATTN_FA4, "fa4|fa-4|flashattention-4|flash-attention-4|"
					  "flash attention 4|flashattention4"},
	{W_ATTENTION, CVC_PROJ_ATTN_FA2, "fa2|fa-2|flashattention-2|flash-attention-2|"
					  "flash attention 2|flashattention2|flash_attn2|"
					  "flash-attn 2|flash-attn==2|flash_attn==2|flashattention v2"},
	{W_ATTENTION, CVC_PROJ_ATTN_FA1, "fa1|fa-1|flashattention-1|flash-attention-1|"
					  "flash attention 1|flashattention1|flash-attn 1|"
					  "flash-attn==1|flash_attn==1|flashattention v1"},
	{W_ATTENTION, CVC_PROJ_ATTN_CUDNN, "cudnn"},
	{W_ATTENTION, CVC_PROJ_ATTN_UNFUSED, "unfused|eager|naive|math|=none|=no"},
	{W_ATTENTION, CVC_PROJ_ATTN_FLASH, "flash|fa3|sdpa|fused|triton|=te"},
	/* FFN: gated (SwiGLU, GeGLU: three matrices) or not (GELU, ReLU,
	 * squared ReLU: two) */
	{W_FFN, CVC_PROJ_FFN_SWIGLU, "glu|silu|gated"},
	{W_FFN, CVC_PROJ_FFN_GELU, "gelu|relu|=mlp"},
	/* optimizer states: two moments (Adam, AdamW, LAMB) or one (SGD with
	 * momentum, Lion, Muon) */
	{W_OPT, CVC_PROJ_ADAM, "adam|lamb"},
	{W_OPT, CVC_PROJ_SGD, "sgd|momentum|lion|muon"},
	/* Transformer Engine's fp8 recipes */
	{W_FP8R, CVC_PROJ_FP8_MXFP8, "mxfp8|=mx|block|microscal"},
	{W_FP8R, CVC_PROJ_FP8_CURRENT, "current|dynamic"},
	{W_FP8R, CVC_PROJ_FP8_DELAYED, "delayed|amax|hybrid|=te"},
	/* MoE dispatch: one copy per node (DeepEP, HybridEP: the flex
	 * dispatcher) or per expert (all-to-all); the allgather dispatcher
	 * matches neither */
	{W_DISPATCH, CVC_PROJ_DISPATCH_FLEX, "flex|deepep|deep-ep|deep_ep|hybridep|hybrid-ep"},
	{W_DISPATCH, CVC_PROJ_DISPATCH_ALLTOALL, "alltoall|all-to-all|all_to_all|a2a"},
};

/* The word kind of an enum field whose published cells are free text. */
static int enum_kind(const char *key, enum wkind *kind)
{
	static const struct { const char *key; enum wkind kind; } kinds[] = {
		{"framework", W_FRAMEWORK}, {"attention", W_ATTENTION}, {"ffn_type", W_FFN},
		{"optimizer", W_OPT},       {"fp8_recipe", W_FP8R}, {"ep_dispatcher", W_DISPATCH},
	};

	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(kinds[i].key, key)) {
			*kind = kinds[i].kind;
			return 0;
		}
	return -1;
}

/* The value of the first rule of kind that text names, read lower-cased
 * from its first cut - 1 bytes.  Returns 0, or -1 when none. */
static int match_words(const char *text, size_t cut, enum wkind kind, int *value)
{
	char t[160];

	lower_copy(t, cut < sizeof t ? cut : sizeof t, text);
	for (size_t i = 0; i < sizeof word_rules / sizeof word_rules[0]; i++) {
		if (word_rules[i].kind == kind && any_word(t, word_rules[i].words)) {
			*value = word_rules[i].value;
			return 0;
		}
	}
	return -1;
}

/*
 * Sharding text: a stage number 0..3, or FSDP / ZeRO / Megatron wording.
 * Hybrid forms (FSDP HYBRID_SHARD, ZeRO++ hpZ) shard inside a node and
 * replicate across nodes: *hybrid = 1.
 */
static int parse_zero(const char *text, double *zero, int *hybrid, int *torch_fsdp)
{
	char t[160];
	char *end;
	double v;
	int stage;

	lower_copy(t, sizeof t, text);
	*hybrid = any_word(t, "hybrid");
	/* FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, NO_SHARD: PyTorch FSDP's
	 * ShardingStrategy names */
	*torch_fsdp = any_word(t, "fsdp|full_shard|shard_grad_op|hybrid_shard|no_shard");
	v = strtod(t, &end);
	if (end != t && !*end && v >= 0 && v <= 3 && v == floor(v)) {
		*zero = v;
		return 0;
	}
	if (match_words(t, sizeof t, W_ZERO, &stage))
		return -1;
	*zero = stage;
	return 0;
}

static int parse_flag(const char *text, int *v)
{
	char t[32];

	lower_copy(t, sizeof t, text);
	if (!proj_parse_flag(t, v))
		return 0;
	/* hand-made tables also write a bare y / n */
	if (!strcmp(t, "y") || !strcmp(t, "n")) {
		*v = t[0] == 'y';
		return 0;
	}
	return -1;
}

/*
 * "1600 Gbps RoCE node-node", "8x400 Gb/s": a node's network bandwidth in
 * GB/s (1e9 B/s), 0 when the text names none.
 */
static double network_gbps(const char *text)
{
	for (const char *p = text; *p; p++) {
		char *end;
		double n, mul = 1, v;

		if (!isdigit((unsigned char)*p) || (p > text && isalnum((unsigned char)p[-1])))
			continue;
		n = strtod(p, &end);
		if (*end == 'x' || *end == 'X') { /* "8x400 Gbps" */
			mul = n;
			n = strtod(end + 1, &end);
		}
		while (*end == ' ')
			end++;
		if (!strncasecmp(end, "gbps", 4) || !strncasecmp(end, "gb/s", 4) ||
		    !strncasecmp(end, "gbit", 4) || !strncasecmp(end, "gbe", 3)) {
			v = mul * n / 8;
			if (v > 0)
				return v;
		}
		p = end > p ? end - 1 : p;
	}
	return 0;
}

int vrow_columns(struct vrow_map *map, char **names, size_t n)
{
	map->n = n;
	map->has_gpu = map->has_dtype = 0;
	map->has_measured = 0;
	for (size_t c = 0; c < n; c++) {
		const char *k = names[c];
		struct vcol *col = &map->col[c];

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
		else if (!strcmp(k, "dtype") || !strcmp(k, "precision"))
			col->role = V_DTYPE;
		else if (!strcmp(k, "recompute"))
			col->role = V_RECOMP;
		else if (!strcmp(k, "source") || !strcmp(k, "notes"))
			col->role = V_TEXT;
		else if ((col->field = proj_field_find(NULL, k)) >= 0)
			col->role = V_FIELD;
		if (col->role == V_GPU)
			map->has_gpu = 1;
		if (col->role == V_DTYPE)
			map->has_dtype = 1;
		if (col->role >= V_TPS && col->role <= V_MFU)
			map->has_measured = 1;
	}
	return 0;
}

/* Fields that define a run: a default filled in for one of them is said. */
static const char *const defining[] = {
	"layers", "hidden", "heads", "kv_heads", "ffn", "ffn_type", "vocab", "seq",
	"global_batch", "micro_batch", "tp", "pp", "vpp", "cp", "sp",
};

static int given_field(const struct vrow *r, int f)
{
	for (int i = 0; i < r->ngiven; i++)
		if (r->given[i] == f)
			return 1;
	return 0;
}

static void mark_given(struct vrow *r, int f)
{
	if (r->ngiven < (int)(sizeof r->given / sizeof r->given[0]))
		r->given[r->ngiven++] = f;
}

/* Sets r->why and returns 1 (the row cannot be projected). */
static int cannot(struct vrow *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	return 1;
}

static int bad_cell(struct vrow *r, const char *col, const char *what)
{
	snprintf(r->err, sizeof r->err, "'%s': line %ld: expected %s in column '%s'", r->path,
		 r->line, what, col);
	return -1;
}

/* What a row's cells said besides its scenario: read by the cells, used
 * for the defaults that follow. */
struct vgiven {
	int dtype, recompute, zero, gpu, ffn_type, tp, pp, framework;
	int hybrid;      /* hybrid sharding named */
	int torch_fsdp;  /* PyTorch FSDP's sharding names used */
};

/* r reset for a new row; a legacy table's own conventions set and said. */
static void row_start(struct vrow *r, int legacy, int default_conv)
{
	cvc_proj_scenario *sc = &r->sc;

	cvc_proj_scenario_default(sc);
	sc->study = "validate";
	sc->model = "";
	r->assumed[0] = r->why[0] = r->err[0] = 0;
	r->ngiven = 0;
	r->tps = r->iter = r->tflops = r->mfu = NAN;
	r->conv = default_conv;
	r->net_gbps = 0;
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

/* A measured figure (role V_TPS .. V_MFU). */
static int read_measured(struct vrow *r, enum vrole role, const char *k, const char *t,
			 int guess)
{
	double v;

	if (proj_parse_number(t, &v) || !(v > 0))
		return bad_cell(r, k, "a positive number");
	if (role == V_TPS)
		r->tps = v;
	else if (role == V_ITER)
		r->iter = v;
	else if (role == V_TFLOPS)
		r->tflops = v;
	else
		r->mfu = v;
	if (guess)
		vrow_note(r, "measured %s=%s (guess)", k, t);
	return 0;
}

/* A cell that names a value of kind in free text (its first 127 bytes)
 * into *field; -1 with what was expected when it names none. */
static int read_word_cell(struct vrow *r, const char *k, const char *t, enum wkind kind,
			  const char *expected, int *field)
{
	int v;

	if (match_words(t, 128, kind, &v))
		return bad_cell(r, k, expected);
	*field = v;
	return 0;
}

/* The gpu cell: a catalog name, free text around it, a node network in
 * parentheses. */
static int read_gpu(struct vrow *r, struct vgiven *g, const char *t, int guess,
		    cvc_proj_ctx *ctx)
{
	char head[128], paren[256];
	const cvc_hw_spec *spec;

	split_paren(t, head, sizeof head, paren, sizeof paren);
	spec = ctx->cat ? cvc_hw_catalog_lookup(ctx->cat, head) : NULL;
	if (!spec && ctx->cat)
		spec = cvc_hw_catalog_lookup(ctx->cat, t);
	if (!spec)
		return cannot(r, "gpu '%s' is not in the hardware catalog", t);
	snprintf(r->gpu, sizeof r->gpu, "%s", spec->name);
	r->sc.gpu = r->gpu;
	g->gpu = 1;
	if (strcmp(head, spec->name) || guess)
		vrow_note(r, "gpu=%s ('%s'%s)", spec->name, t, guess ? ", guess" : "");
	r->net_gbps = network_gbps(paren);
	return 0;
}

/* "PyTorch FSDP2", "DeepSpeed ZeRO-3" in a framework cell: the sharding
 * too, unless a column has said it. */
static void zero_from_stack(struct vrow *r, struct vgiven *g, const char *t)
{
	char w[160];
	double z;
	int hybrid, torch;

	lower_copy(w, sizeof w, t);
	if (g->zero || !any_word(w, "fsdp|zero|shard") || parse_zero(t, &z, &hybrid, &torch))
		return;
	r->sc.zero = z;
	g->zero = 1;
	g->hybrid |= hybrid;
	vrow_note(r, "zero=%g ('%s')", z, t);
}

/*
 * An enum field's cell: one of its names, or for the fields published
 * tables word freely ("FlashAttention-2", "AdamW", "torchtitan") what the
 * words name, said in the row's notes.  0 with *v set; 1 when the words name
 * a stack or kernel cvc has no model of (the row is not projected); -1 when
 * the cell is malformed.
 */
static int read_enum(struct vrow *r, struct vgiven *g, const struct proj_field *fd,
		     const char *k, const char *t, int *v)
{
	char w[64], what[256];
	enum wkind kind;

	/* longer than any enum name: truncating keeps it unmatched */
	lower_copy(w, sizeof w, t);
	if ((*v = proj_enum_index(fd->names, w)) >= 0)
		return 0;
	if (enum_kind(fd->key, &kind)) {
		snprintf(what, sizeof what, "one of %s", fd->names);
		return bad_cell(r, k, what);
	}
	if (match_words(t, 128, kind, v))
		return cannot(r, "%s '%s' is none cvc models (%s)", fd->key, t, fd->names);
	proj_enum_name(fd->names, *v, w, sizeof w);
	vrow_note(r, "%s=%s ('%s')", fd->key, w, t);
	if (kind == W_FRAMEWORK)
		zero_from_stack(r, g, t);
	return 0;
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
	int f = proj_field_find(NULL, "attention");

	if (f < 0 || given_field(r, f) || !*t)
		return;
	/* word_rules' FlashAttention versions only: the unversioned words
	 * ("flash", "fused") say nothing a default does not */
	for (size_t j = 0; j < sizeof word_rules / sizeof word_rules[0]; j++) {
		const struct word_rule *w = &word_rules[j];
		char name[16];

		if (w->kind != W_ATTENTION ||
		    (w->value != CVC_PROJ_ATTN_FA4 && w->value != CVC_PROJ_ATTN_FA2 &&
		     w->value != CVC_PROJ_ATTN_FA1) ||
		    !any_word(t, w->words))
			continue;
		r->sc.attention = w->value;
		mark_given(r, f);
		proj_enum_name(proj_fields[f].names, w->value, name, sizeof name);
		vrow_note(r, "attention=%s (named in the row's text)", name);
		return;
	}
	if (any_word(t, "llm-foundry|llm_foundry|llm foundry") && any_word(t, "flash")) {
		r->sc.attention = CVC_PROJ_ATTN_FA1;
		mark_given(r, f);
		vrow_note(r, "attention=fa1 (llm-foundry's attn_impl flash: flash-attn 1.x, its gpu "
			     "extra before llm-foundry 0.6.0)");
	}
}

/* Megatron-Core's --moe-layer-freq written as a list ("([0]*3+[1]*58)"):
 * the two fields of cvc's layer pattern, said in the row. */
static int read_pattern(struct vrow *r, const char *k, const char *t)
{
	double first, freq, n;
	int other;
	const char *why = proj_parse_layer_pattern(t, &first, &freq, &n, &other);
	char what[160];

	if (why && other)
		return cannot(r, "moe_layer_freq '%s': %s (cvc prices k dense layers, then an MoE "
			      "layer every f-th)", t, why);
	if (why) {
		snprintf(what, sizeof what, "a number or a list such as ([0]*3+[1]*58) (%s)", why);
		return bad_cell(r, k, what);
	}
	proj_field_set_num(&r->sc, proj_field_find(NULL, "moe_first_dense"), first);
	proj_field_set_num(&r->sc, proj_field_find(NULL, "moe_layer_freq"), freq);
	mark_given(r, proj_field_find(NULL, "moe_first_dense"));
	vrow_note(r, "moe_first_dense=%g, moe_layer_freq=%g (from %g layers' list)", first, freq, n);
	return 0;
}

/* A scenario field's cell, by the field's type. */
static int read_field(struct vrow *r, struct vgiven *g, int field, const char *k,
		      const char *t, int guess)
{
	const struct proj_field *fd = &proj_fields[field];
	cvc_proj_scenario *sc = &r->sc;

	switch (fd->type) {
	case PF_NUM: {
		double v;

		if (proj_parse_number(t, &v) && !strcmp(fd->key, "moe_layer_freq")) {
			int rc = read_pattern(r, k, t);

			if (rc)
				return rc;
			break;
		}
		if (proj_parse_number(t, &v))
			return bad_cell(r, k, "a number");
		if (v < 0)
			return bad_cell(r, k, "a number >= 0");
		proj_field_set_num(sc, field, v);
		break;
	}
	case PF_FLAG: {
		int v;

		if (parse_flag(t, &v))
			return bad_cell(r, k, "true or false");
		proj_field_set_num(sc, field, v);
		break;
	}
	case PF_ENUM: {
		int v, rc = read_enum(r, g, fd, k, t, &v);

		if (rc)
			return rc;
		proj_field_set_num(sc, field, v);
		if (!strcmp(fd->key, "ffn_type"))
			g->ffn_type = 1;
		break;
	}
	case PF_STR:
		if (!strcmp(fd->key, "recompute_modules")) {
			int mask;
			char bad[80];

			if (proj_recompute_modules(t, &mask, bad, sizeof bad))
				return cannot(r, "recompute_modules '%s' is none cvc models (core_attn, "
					      "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts)",
					      bad);
			snprintf(r->rcmods, sizeof r->rcmods, "%.*s", (int)sizeof r->rcmods - 1, t);
			sc->recompute_modules = r->rcmods;
			break;
		}
		/* the label; gpu has its own role */
		snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1, t);
		sc->model = r->name;
		break;
	}
	if (!strcmp(fd->key, "tp"))
		g->tp = 1;
	if (!strcmp(fd->key, "pp"))
		g->pp = 1;
	mark_given(r, field);
	if (guess)
		vrow_note(r, "%s=%s (guess)", fd->key, t);
	if (!strcmp(fd->key, "framework"))
		g->framework = 1;
	return 0;
}

/* One cell t (cleaned, not empty) of column k: 0, 1 (cannot be
 * projected) or -1 (malformed), as vrow_read(). */
static int read_cell(struct vrow *r, struct vgiven *g, const struct vcol *col, const char *k,
		     const char *t, int guess, cvc_proj_ctx *ctx)
{
	cvc_proj_scenario *sc = &r->sc;

	switch (col->role) {
	case V_TPS:
	case V_ITER:
	case V_TFLOPS:
	case V_MFU:
		return read_measured(r, col->role, k, t, guess);
	case V_CONV: {
		int cv = proj_flops_parse(t);
		char what[256];

		if (cv < 0) {
			snprintf(what, sizeof what, "a FLOP convention (%s)", proj_flops_names());
			return bad_cell(r, k, what);
		}
		r->conv = cv;
		return 0;
	}
	case V_ZERO: {
		double z;

		if (parse_zero(t, &z, &g->hybrid, &g->torch_fsdp))
			return bad_cell(r, k, "a ZeRO stage 0-3 or an FSDP / ZeRO strategy");
		sc->zero = z;
		g->zero = 1;
		if (!isdigit((unsigned char)t[0]) || guess)
			vrow_note(r, "zero=%g ('%s'%s)", z, t, guess ? ", guess" : "");
		return 0;
	}
	case V_GPU:
		return read_gpu(r, g, t, guess, ctx);
	case V_DTYPE:
		if (read_word_cell(r, k, t, W_DTYPE, "a dtype (bf16, fp16, fp8, fp32)", &sc->dtype))
			return -1;
		g->dtype = 1;
		if (guess)
			vrow_note(r, "dtype=%s (guess)", t);
		return 0;
	case V_RECOMP:
		if (read_word_cell(r, k, t, W_RECOMPUTE, "none, selective or full", &sc->recompute))
			return -1;
		g->recompute = 1;
		return 0;
	case V_FIELD:
		return read_field(r, g, col->field, k, t, guess);
	default:
		return 0;
	}
}

/* A modern table's row: the defaults for what it did not say, by the
 * stack it names (none named: Megatron-Core, as its recipes run it). */
static void stack_defaults(struct vrow *r, struct vgiven *g)
{
	cvc_proj_scenario *sc = &r->sc;

	if (!g->gpu)
		vrow_note(r, "gpu=%s (default)", sc->gpu);
	if (!g->dtype)
		vrow_note(r, "dtype=bf16 (default)");
	if (!g->recompute)
		vrow_note(r, "recompute=%s (default)",
			  sc->recompute == CVC_PROJ_RECOMP_SELECTIVE ? "selective" : "none");
	if (!g->framework) {
		/* the stack a run names through its sharding wording; runs that
		 * name none are taken as Megatron-Core's, configured as its
		 * recipes (NeMo, Megatron-LM's examples) run it */
		sc->framework = g->torch_fsdp ? CVC_PROJ_FW_PYTORCH : CVC_PROJ_FW_MEGATRON;
		vrow_note(r, "framework=%s (%s)", g->torch_fsdp ? "pytorch" : "megatron",
			  g->torch_fsdp ? "PyTorch FSDP's sharding names" : "default");
	}
	if (sc->framework == CVC_PROJ_FW_MEGATRON) {
		int f;

		/* a 3D grid's depth axis shards the weights itself (AxoNN): no
		 * distributed optimizer on top */
		if (!g->zero && !proj_is_3d(sc)) {
			sc->zero = 1;
			vrow_note(r, "zero=1 (Megatron-Core's distributed optimizer)");
			g->zero = 1;
		}
		f = proj_field_find(NULL, "sp");
		if (sc->tp > 1 && !given_field(r, f)) {
			sc->sp = 1;
			mark_given(r, f);
			vrow_note(r, "sp=1 (Megatron-Core with tp > 1)");
		}
		f = proj_field_find(NULL, "tp_overlap");
		if (sc->tp > 1 && !given_field(r, f)) {
			sc->tp_overlap = 1;
			vrow_note(r, "tp_overlap=1 (Megatron-Core's --tp-comm-overlap)");
		}
	}
	if (!g->zero)
		vrow_note(r, "zero=%g (default)", sc->zero);
}

/* Says the defaults filled in for the fields that define a run. */
static void note_defining(struct vrow *r, int legacy)
{
	cvc_proj_scenario *sc = &r->sc;

	for (size_t i = 0; i < sizeof defining / sizeof defining[0]; i++) {
		int f = proj_field_find("model", defining[i]);
		char val[64];

		if (f < 0)
			f = proj_field_find(NULL, defining[i]);
		if (f < 0 || given_field(r, f))
			continue;
		if (legacy && (!strcmp(defining[i], "seq") || !strcmp(defining[i], "vocab") ||
			       !strcmp(defining[i], "micro_batch") || !strcmp(defining[i], "sp") ||
			       !strcmp(defining[i], "vpp") || !strcmp(defining[i], "cp") ||
			       !strcmp(defining[i], "kv_heads") || !strcmp(defining[i], "ffn") ||
			       !strcmp(defining[i], "ffn_type")))
			continue; /* the table's own conventions, said once above */
		if (!strcmp(defining[i], "kv_heads") || !strcmp(defining[i], "ffn"))
			snprintf(val, sizeof val, "%s", !strcmp(defining[i], "ffn")
							      ? (sc->ffn_type ? "8h/3" : "4h")
							      : "heads");
		else if (proj_fields[f].type == PF_ENUM)
			proj_enum_name(proj_fields[f].names, (int)proj_field_get(sc, f), val,
				       sizeof val);
		else
			snprintf(val, sizeof val, "%g", proj_field_get(sc, f));
		vrow_note(r, "%s=%s (default)", defining[i], val);
	}
}

/* The node network the gpu text named, as a scale of the catalog GPU's
 * inter-node bandwidth. */
static void scale_network(struct vrow *r, cvc_proj_ctx *ctx)
{
	cvc_proj_scenario *sc = &r->sc;
	const cvc_hw_spec *spec = cvc_hw_catalog_lookup(ctx->cat, sc->gpu);
	double gpn = sc->gpus_per_node >= 1 ? sc->gpus_per_node : 8;
	double per_gpu = r->net_gbps / gpn;

	if (spec && spec->inter_bw_gbps > 0) {
		sc->scale_inter_bw = per_gpu / spec->inter_bw_gbps;
		vrow_note(r, "network %.4g GB/s per GPU (%.4g Gb/s per node, from the gpu text)",
			  per_gpu, r->net_gbps * 8);
	}
}

int vrow_read(struct vrow *r, const struct vrow_map *map, char **names, char **cells,
	      cvc_proj_ctx *ctx, int legacy, int default_conv)
{
	cvc_proj_scenario *sc = &r->sc;
	struct vgiven g;
	char buf[512], text[1024] = "";
	int rc;

	memset(&g, 0, sizeof g);
	row_start(r, legacy, default_conv);
	for (size_t c = 0; c < map->n; c++) {
		int guess = 0;
		char *t;

		if (map->col[c].role == V_CARRY)
			continue;
		if (map->col[c].role == V_TEXT) {
			size_t n = strlen(text);

			snprintf(text + n, sizeof text - n, "%s ", cells[c]);
			continue;
		}
		t = clean(cells[c], buf, sizeof buf, &guess);
		if (is_empty(t))
			continue;
		if ((rc = read_cell(r, &g, &map->col[c], names[c], t, guess, ctx)))
			return rc;
	}
	/* a 3D tensor-parallel grid (tp_row, tp_col, tp_depth) is a layout too */
	if (!g.tp && !g.pp && !legacy && !proj_is_3d(sc))
		return cannot(r, "layout not given (tp, pp; or tp_row, tp_col, tp_depth)");
	if (!legacy) {
		lower(text);
		attention_from_text(r, text);
		stack_defaults(r, &g);
	}
	if (g.hybrid && !(sc->shard_group > 0)) {
		double gpn = sc->gpus_per_node >= 1 ? sc->gpus_per_node : 8;
		double per = (sc->tp >= 1 ? sc->tp : 1) * (sc->cp >= 1 ? sc->cp : 1);

		sc->shard_group = fmax(1, floor(gpn / per));
		vrow_note(r, "shard_group=%g (hybrid sharding: shard inside a node, replicate "
			     "across)", sc->shard_group);
	}
	r->hybrid = g.hybrid;
	/* A gated FFN (SwiGLU, GeGLU) is sized about 8h/3..3.5h to keep the
	 * parameters of a 4h two-matrix FFN; one at 4h or wider is taken as
	 * two matrices (GELU, squared ReLU). */
	if (!g.ffn_type && sc->ffn > 0 && sc->hidden > 0) {
		sc->ffn_type = sc->ffn < 4 * sc->hidden ? CVC_PROJ_FFN_SWIGLU : CVC_PROJ_FFN_GELU;
		vrow_note(r, "ffn_type=%s (ffn %s 4 x hidden)",
			  sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? "swiglu" : "gelu",
			  sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? "<" : ">=");
		mark_given(r, proj_field_find("model", "ffn_type"));
	}
	note_defining(r, legacy);
	if (r->net_gbps > 0)
		scale_network(r, ctx);
	return 0;
}
