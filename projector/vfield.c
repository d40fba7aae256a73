/*
 * vfield.c - a scenario field's cell in a published table: a number with
 * what people write around it (vcell.c), and the forms some columns give
 * a meaning ("18432 dense/2048 per expert" sets the dense and the expert
 * FFN, "256+1 shared" the routed and the shared experts, "MLA" in kv_heads
 * multi-latent attention, a ramp "3072->15360" its final value); a flag;
 * an enum field's free text ("FlashAttention-2", "AdamW", "torchtitan")
 * by the words that name its values.  Every value not read verbatim is
 * said in the row's assumed text (vrow_note(), vrow_assume()).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "vrow.h"

/* The largest count any published run could state; a bigger cell is a
 * typo or a hostile file, refused by the cell, not by an overflow later. */
#define MAX_COUNT 1e15

/* The words that name an enum field's values, by field; the first rule of
 * a field that matches wins, so the order settles overlaps. */
static const struct word_rule {
	const char *key;
	const char *value; /* the field's enum name */
	const char *words; /* vtext_has() words */
} word_rules[] = {
	/* the stack: Megatron's fused kernels (NeMo, Megatron-Bridge,
	 * Megatron-DeepSpeed), torchtitan, or eager PyTorch (FSDP, DeepSpeed,
	 * llm-foundry); JAX/XLA stacks match neither.  NeMo AutoModel is NeMo's
	 * PyTorch backend (FSDP2): before "nemo" */
	{"framework", "pytorch", "automodel|nemo_automodel"},
	{"framework", "megatron",
	 "megatron|megatron-lm|megatron-core|megatron-deepspeed|megatron-bridge|nemo|mcore|m-core"},
	{"framework", "torchtitan", "torchtitan|titan"},
	{"framework", "pytorch",
	 "pytorch|torch|fsdp|fsdp2|llm-foundry|foundry|composer|deepspeed|"
	 "accelerate|lightning|hugging face|huggingface|transformers|ddp|colossal-ai|colossalai|"
	 "fairscale"},
	/* attention: "FlashAttention-2", "cuDNN (TE)", "SDPA", "FA3", "eager" */
	{"attention", "fa4", "fa4|fa-4|flashattention-4|flash-attention-4|flash attention 4|"
			     "flashattention4"},
	{"attention", "fa2", "fa2|fa-2|flashattention-2|flash-attention-2|flash attention 2|"
			     "flashattention2|flash_attn2|flash-attn 2|flash-attn==2|flash_attn==2|"
			     "flashattention v2"},
	{"attention", "fa1", "fa1|fa-1|flashattention-1|flash-attention-1|flash attention 1|"
			     "flashattention1|flash-attn 1|flash-attn==1|flash_attn==1|"
			     "flashattention v1"},
	{"attention", "cudnn", "cudnn"},
	{"attention", "unfused", "unfused|eager|naive|math|none|no"},
	{"attention", "flash", "flash|flashattention|flash-attention|fa3|fa-3|sdpa|fused|triton|te"},
	/* FFN: GELU-gated (GeGLU), other gated ones (SwiGLU, ReGLU: three
	 * matrices), squared ReLU, or GELU and ReLU (two) */
	{"ffn_type", "geglu", "geglu|gated gelu|gelu-gated|gated-gelu"},
	{"ffn_type", "swiglu", "swiglu|reglu|glu|silu|gated|swish"},
	{"ffn_type", "relu2", "squared relu|squared-relu|relu2|relu^2"},
	{"ffn_type", "gelu", "gelu|relu|mlp"},
	/* optimizer states: two moments (Adam, AdamW, LAMB) or one (SGD with
	 * momentum, Lion, Muon) */
	{"optimizer", "adam", "adam|adamw|lamb|fusedadam|distributed fused adam"},
	{"optimizer", "sgd", "sgd|momentum|lion|muon"},
	/* Transformer Engine's fp8 recipes */
	{"fp8_recipe", "mxfp8", "mxfp8|mx|fp8-mx|microscaling"},
	{"fp8_recipe", "blockwise", "blockwise|block-wise|block scaling|fine-grained|1x128|128x128"},
	{"fp8_recipe", "current", "current|current scaling|fp8-cs|cs|tensorwise|dynamic"},
	{"fp8_recipe", "delayed", "delayed|delayed scaling|amax|fp8-ds|ds|te"},
	/* MoE dispatch: one copy per node (DeepEP, HybridEP: the flex
	 * dispatcher) or per expert (all-to-all); the allgather dispatcher
	 * matches neither */
	{"ep_dispatcher", "flex", "flex|deepep|deep-ep|deep_ep|hybridep|hybrid-ep|hybrid_ep"},
	{"ep_dispatcher", "alltoall", "alltoall|all-to-all|all_to_all|a2a"},
};

int vrow_enum_words(const char *key, const char *text)
{
	char t[512];

	vtext_lower(t, sizeof t, text);
	return vrow_enum_words_lower(key, t);
}

int vrow_enum_words_lower(const char *key, const char *t)
{
	int f = proj_field_find(NULL, key);

	if (f < 0)
		return -1;
	for (size_t i = 0; i < sizeof word_rules / sizeof word_rules[0]; i++)
		if (!strcmp(word_rules[i].key, key) && vtext_has(t, word_rules[i].words))
			return proj_enum_index(proj_fields[f].names, word_rules[i].value);
	return -1;
}

/* Whether the field has word rules (a free-text column). */
static int worded(const char *key)
{
	for (size_t i = 0; i < sizeof word_rules / sizeof word_rules[0]; i++)
		if (!strcmp(word_rules[i].key, key))
			return 1;
	return 0;
}

/* "PyTorch FSDP2", "DeepSpeed ZeRO-3" in a framework cell: the sharding
 * too, unless a column has said it. */
static void zero_from_stack(struct vrow *r, const char *t)
{
	struct vshard s;

	if (r->g.has_shard || vtext_sharding(t, &s) || s.stage < 0)
		return;
	r->g.shard = s;
	r->g.has_shard = 1;
	snprintf(r->g.shard_cell, sizeof r->g.shard_cell, "%.*s",
		 (int)sizeof r->g.shard_cell - 1, t);
}

/*
 * An enum field's cell: one of its names, or, for the fields published
 * tables word freely, what the words name, said.  0 with *v set; 1 when
 * the row is not projected (words cvc has no model of, or none it reads).
 */
static int read_enum(struct vrow *r, const struct proj_field *fd, const char *k, const char *t,
		     int *v)
{
	char w[64];

	/* longer than any enum name: truncating keeps it unmatched */
	vtext_lower(w, sizeof w, t);
	if ((*v = proj_enum_index(fd->names, w)) >= 0)
		return 0;
	if (!worded(fd->key))
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected one of %s)", k,
				   t, fd->names);
	if ((*v = vrow_enum_words(fd->key, t)) < 0)
		return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED, "%s '%s' is none cvc models (%s)",
				   fd->key, t, fd->names);
	proj_enum_name(fd->names, *v, w, sizeof w);
	vrow_note(r, "%s=%s ('%s')", fd->key, w, t);
	if (!strcmp(fd->key, "framework"))
		zero_from_stack(r, t);
	return 0;
}

/* Megatron-Core's --moe-layer-freq written as a list ("([0]*3+[1]*58)"):
 * the two fields of cvc's layer pattern, said in the row. */
static int read_pattern(struct vrow *r, const char *k, const char *t)
{
	double first, freq, n;
	int other;
	const char *why = proj_parse_layer_pattern(t, &first, &freq, &n, &other);

	if (why && other)
		return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED,
				   "moe_layer_freq '%s': %s (cvc prices k dense layers, then an MoE "
				   "layer every f-th)", t, why);
	if (why)
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL,
				   "column %s: '%s' (expected a number or a list such as "
				   "([0]*3+[1]*58): %s)", k, t, why);
	proj_field_set_num(&r->sc, vrow_fid(r, "moe_first_dense"), first);
	proj_field_set_num(&r->sc, vrow_fid(r, "moe_layer_freq"), freq);
	vrow_mark(r, vrow_fid(r, "moe_first_dense"));
	vrow_note(r, "moe_first_dense=%g, moe_layer_freq=%g (from %g layers' list)", first, freq, n);
	return 0;
}

/* Sets numeric field key to v, given, said as read from cell t. */
static void set_labelled(struct vrow *r, const char *key, double v, const char *t)
{
	int f = vrow_fid(r, key);

	if (f < 0 || vrow_given(r, f))
		return;
	proj_field_set_num(&r->sc, f, v);
	vrow_mark(r, f);
	vrow_note(r, "%s=%g ('%s')", key, v, t);
}

/*
 * The forms a column gives a meaning: "A dense/B per expert" in ffn,
 * "E+S shared" (or "E routed + S shared", "E (top-k)") in the experts
 * column.  Returns 1 when the cell's numbers were all placed (*v is the
 * column's own value), 0 when the remark is only to be quoted.
 */
static int labelled_forms(struct vrow *r, const char *key, const char *t, double *v)
{
	struct vlabel l[4];
	size_t n = vcell_labels(t, l, 4);
	int placed = 0;

	if (n < 1)
		return 0;
	if (!strcmp(key, "ffn")) {
		int own = 0;

		for (size_t i = 0; i < n; i++) {
			if (strstr(l[i].word, "shared")) {
				set_labelled(r, "shared_ffn", l[i].v, t);
				placed++;
			} else if (strstr(l[i].word, "expert") || strstr(l[i].word, "moe") ||
				   strstr(l[i].word, "routed")) {
				set_labelled(r, "moe_ffn", l[i].v, t);
				placed++;
			} else if (strstr(l[i].word, "dense") || (i == 0 && !l[i].word[0])) {
				*v = l[i].v;
				own = 1;
				placed++;
			}
		}
		/* "2048 per expert" alone: the expert width, the dense one not given */
		return placed == (int)n ? (own ? 1 : 2) : 0;
	}
	if (!strcmp(key, "experts")) {
		for (size_t i = 0; i < n; i++) {
			if (strstr(l[i].word, "shared")) {
				r->g.shared_n = l[i].v;
				placed++;
			} else if (!strncmp(l[i].word, "top", 3) || strstr(l[i].word, "active")) {
				set_labelled(r, "top_k", l[i].v, t);
				placed++;
			} else if (i == 0 && (!l[i].word[0] || strstr(l[i].word, "routed") ||
					      strstr(l[i].word, "expert"))) {
				*v = l[i].v;
				placed++;
			}
		}
		if (r->g.shared_n > 0)
			vrow_note(r, "%g shared expert%s ('%s')", r->g.shared_n,
				  r->g.shared_n == 1 ? "" : "s", t);
		return placed == (int)n ? 1 : 0;
	}
	return 0;
}

/* kv_heads written as the attention's kind: "MLA", "MQA", "MHA", "GQA-8". */
static int kv_words(struct vrow *r, int field, const char *t)
{
	char w[64];
	struct vnum n;
	const char *what, *p;

	vtext_lower(w, sizeof w, t);
	if (vtext_has(w, "mla|multi-latent|multi latent|latent")) {
		r->g.mla = 1;
		vrow_note(r, "multi-latent attention ('%s')", t);
		return 0;
	}
	if (vtext_has(w, "mqa|multi-query")) {
		proj_field_set_num(&r->sc, field, 1);
		vrow_mark(r, field);
		vrow_note(r, "kv_heads=1 ('%s': multi-query attention)", t);
		return 0;
	}
	if ((p = vtext_find(w, "gqa")) != NULL) {
		p += 3;
		while (*p == '-' || *p == ' ' || *p == '=' || *p == ':')
			p++;
		if (!vcell_number(p, 0, &n, &what) && n.v >= 1) {
			proj_field_set_num(&r->sc, field, n.v);
			vrow_mark(r, field);
			vrow_note(r, "kv_heads=%g ('%s')", n.v, t);
			return 0;
		}
	}
	if (vtext_has(w, "mha|multi-head")) {
		vrow_note(r, "kv_heads=heads ('%s': multi-head attention)", t);
		return 0;
	}
	return -1;
}

/* What a unit written on a number multiplies it by in column key, and
 * whether that is a reading to say: "8K" in seq is 8192 (sequence lengths
 * are powers of two), elsewhere K is a thousand. */
static double unit_scale(char unit, const char *key, const char **how)
{
	*how = NULL;
	switch (unit) {
	case 'K':
		if (!strcmp(key, "seq")) {
			*how = "K = 1024 in a sequence length";
			return 1024;
		}
		return 1e3;
	case 'M':
		return 1e6;
	case 'G':
	case 'B':
		return 1e9;
	case 'T':
		return 1e12;
	default:
		return 1;
	}
}

/* A numeric field's cell: the number, the forms its column gives a
 * meaning, the rest quoted. */
static int read_number(struct vrow *r, int field, const char *k, const char *t, int guess)
{
	const struct proj_field *fd = &proj_fields[field];
	struct vnum n;
	const char *what, *how;
	double v;
	int forms;

	if (!strcmp(fd->key, "kv_heads") && !kv_words(r, field, t))
		return 0;
	if (vcell_number(t, r->decimal_comma, &n, &what)) {
		if (!strcmp(fd->key, "moe_layer_freq") && strchr(t, '['))
			return read_pattern(r, k, t);
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected %s)", k, t,
				   what);
	}
	v = n.v * unit_scale(n.unit, fd->key, &how);
	if (n.unit == '%')
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected a count, "
				   "not a percentage)", k, t);
	if (isfinite(n.to)) {
		v = n.to * unit_scale(n.unit, fd->key, &how);
		vrow_assume(r, "%s=%g (the final value of the ramp '%s')", fd->key, v, t);
	}
	if (!(v < MAX_COUNT))
		return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected a number "
				   "below 1e15)", k, t);
	/* a global batch given in tokens ("4M tokens"): sequences once the
	 * row's seq is known (vdefault.c) */
	if (!strcmp(fd->key, "global_batch") && n.remark[0] && !isfinite(n.to) &&
	    vtext_has(n.remark, "tokens|token|tok") && !n.guess) {
		r->g.batch_tokens = v;
		r->g.batch_unit = n.unit;
		r->g.batch_num = n.v;
		snprintf(r->g.batch_cell, sizeof r->g.batch_cell, "%.*s",
			 (int)sizeof r->g.batch_cell - 1, t);
		return 0;
	}
	forms = n.remark[0] ? labelled_forms(r, fd->key, t, &v) : 0;
	if (forms == 2) {
		/* the cell gave only other fields' values ("2048 per expert") */
		if (guess || n.guess)
			vrow_assume(r, "'%s' (guess)", t);
		return 0;
	}
	proj_field_set_num(&r->sc, field, v);
	vrow_mark(r, field);
	if (how)
		vrow_assume(r, "%s=%g ('%s': %s)", fd->key, v, t, how);
	if (guess || n.guess)
		vrow_assume(r, "%s=%g (guess%s%s)", fd->key, v, n.remark[0] ? ": " : "",
			    n.remark);
	else if (n.approx || n.bound)
		vrow_assume(r, "%s=%g ('%s': %s)", fd->key, v, t,
			    n.approx ? "approximate" : "a bound");
	else if (n.remark[0] && !forms)
		vrow_assume(r, "%s=%g ('%s': the remark '%s' not read)", fd->key, v, t, n.remark);
	else if (forms || n.grouped)
		vrow_note(r, "%s=%g ('%s')", fd->key, v, t);
	return 0;
}

/*
 * A yes/no cell: "yes", "true", "on", "enabled", "x", "1", or the same
 * switched off ("no", "off", "disabled", "0"), also written as a setting
 * ("SP=1", "sequence_parallel: false").  1, 0, or -1 when it says neither.
 */
static int read_flag(const char *t)
{
	char w[128];
	const char *eq;
	int v = vtext_switch(t, "true|yes|y|on|1|enabled|x|used");

	if (v >= 0)
		return v;
	if (vtext_switch(t, "false|no|n|off|0|disabled|none|unused") >= 0)
		return 0;
	vtext_lower(w, sizeof w, t);
	if ((eq = strpbrk(w, "=:")) != NULL) {
		eq++;
		while (*eq == ' ')
			eq++;
		return read_flag(eq);
	}
	return -1;
}

/* A cuda_graphs cell: a switch, or Megatron-Core's --cuda-graph-impl value
 * ("full_iteration", "full-iteration graphs": 2); -1 for neither. */
static int read_graphs(const char *t)
{
	char w[128];
	int v;

	vtext_lower(w, sizeof w, t);
	if (strstr(w, "full"))
		return 2;
	if (!proj_parse_graphs(w, &v))
		return v;
	return read_flag(t);
}

int vrow_field(struct vrow *r, int field, const char *k, const char *t, int guess)
{
	const struct proj_field *fd = &proj_fields[field];
	cvc_proj_scenario *sc = &r->sc;

	switch (fd->type) {
	case PF_NUM: {
		int rc = read_number(r, field, k, t, guess);

		if (rc)
			return rc;
		break;
	}
	case PF_FLAG: {
		int v = strcmp(fd->key, "cuda_graphs") ? read_flag(t) : read_graphs(t);

		if (v < 0)
			return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "column %s: '%s' (expected true "
					   "or false)", k, t);
		proj_field_set_num(sc, field, v);
		vrow_mark(r, field);
		if (guess)
			vrow_assume(r, "%s=%d (guess)", fd->key, v);
		else if (strcmp(t, "0") && strcmp(t, "1") && strcasecmp(t, "true") &&
			 strcasecmp(t, "false"))
			vrow_note(r, "%s=%d ('%s')", fd->key, v, t);
		break;
	}
	case PF_ENUM: {
		int v, rc = read_enum(r, fd, k, t, &v);

		if (rc)
			return rc;
		proj_field_set_num(sc, field, v);
		vrow_mark(r, field);
		if (!strcmp(fd->key, "ffn_type"))
			r->g.ffn_type = 1;
		if (!strcmp(fd->key, "framework"))
			r->g.framework = 1;
		if (!strcmp(fd->key, "fp8_recipe"))
			r->g.recipe = 1;
		if (guess)
			vrow_assume(r, "%s='%s' (guess)", fd->key, t);
		break;
	}
	case PF_STR:
		if (!strcmp(fd->key, "recompute_modules") || !strcmp(fd->key, "offload_modules")) {
			int rc = !strcmp(fd->key, "recompute_modules");
			char bad[80], *buf = rc ? r->rcmods : r->ofmods;
			size_t cap = rc ? sizeof r->rcmods : sizeof r->ofmods;
			const char *names;

			if (proj_modules_bad(fd->key, t, bad, sizeof bad, &names))
				return vrow_cannot(r, CVC_PROJ_VWHY_UNMODELLED,
						   "%s '%s' is none cvc models (%s)", fd->key, bad,
						   names);
			snprintf(buf, cap, "%.*s", (int)cap - 1, t);
			*(const char **)((char *)sc + fd->offset) = buf;
			vrow_mark(r, field);
			break;
		}
		/* a layer pattern or a pipeline layout as the configurations
		 * write them (checked where the scenario is finalized) */
		if (!strcmp(fd->key, "layer_pattern") || !strcmp(fd->key, "pp_layout")) {
			int pat = !strcmp(fd->key, "layer_pattern");
			char *buf = pat ? r->pattern : r->layout;
			size_t cap = pat ? sizeof r->pattern : sizeof r->layout;

			if (strlen(t) >= cap)
				return vrow_cannot(r, CVC_PROJ_VWHY_CELL, "%s '%.40s...' is longer "
						   "than %zu characters", fd->key, t, cap - 1);
			snprintf(buf, cap, "%s", t);
			*(const char **)((char *)sc + fd->offset) = buf;
			vrow_mark(r, field);
			break;
		}
		/* the label; gpu has its own role */
		snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1, t);
		sc->model = r->name;
		vrow_mark(r, field);
		break;
	}
	if (!strcmp(fd->key, "tp"))
		r->g.tp = 1;
	if (!strcmp(fd->key, "pp"))
		r->g.pp = 1;
	return 0;
}
