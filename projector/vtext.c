/*
 * vtext.c - the settings published tables write in words, each read by a
 * small grammar of its own instead of by substrings: sharding ("DDP
 * (FSDP=0)", "FSDP (shard group 64/8)", "ZeRO-1 DP", "HYBRID_SHARD"),
 * numeric formats with their recipes ("fp8-cs", "mxfp8 (32x32)",
 * "fp8 (fine-grained 1x128/128x128)", "nvfp4"), and the recompute wording
 * ("partial (RMSNorm, MLA up-proj recomputed)").  A word counts only as a
 * whole word, and a negation in front of it or a zero behind it turns it
 * off ("no FSDP", "FSDP=0", "without sequence parallel").  The hardware
 * cell and the software stack have files of their own (vgpu.c,
 * vstack.c); docs/SCENARIOS.md "validate" lists every rule with an
 * example.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vrow.h"

void vtext_lower(char *t, size_t len, const char *text)
{
	size_t i = 0;

	for (; text[i] && i + 1 < len; i++)
		t[i] = (char)tolower((unsigned char)text[i]);
	if (len)
		t[i] = 0;
}

/* Whether c may be part of a word ("fsdp2", "shard_grad_op", "zero-3"
 * are one word each for this purpose: '-' joins only inside find_word). */
static int wordc(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

const char *vtext_find_n(const char *t, const char *w, size_t n)
{
	if (!n)
		return NULL;
	for (const char *p = strchr(t, w[0]); p; p = strchr(p + 1, w[0])) {
		if (strncmp(p, w, n))
			continue;
		/* a word may carry a version ("fsdp2", "fa3") but not run into
		 * more letters ("fsdpx", "ddpm") */
		if (p > t && wordc(p[-1]) && wordc(w[0]))
			continue;
		if (isalpha((unsigned char)p[n]) && wordc(w[n - 1]))
			continue;
		return p;
	}
	return NULL;
}

const char *vtext_find(const char *t, const char *w)
{
	return vtext_find_n(t, w, strlen(w));
}

int vtext_has(const char *t, const char *words)
{
	while (*words) {
		const char *bar = strchr(words, '|');
		size_t n = bar ? (size_t)(bar - words) : strlen(words);

		if (vtext_find_n(t, words, n))
			return 1;
		words += n + (bar ? 1 : 0);
	}
	return 0;
}

/* The first of the '|'-separated words in t (lower case): where it starts,
 * NULL when none; *len its length. */
static const char *first_of(const char *t, const char *words, size_t *len)
{
	const char *best = NULL;

	while (*words) {
		const char *bar = strchr(words, '|');
		size_t n = bar ? (size_t)(bar - words) : strlen(words);
		const char *p = vtext_find_n(t, words, n);

		if (p && (!best || p < best)) {
			best = p;
			*len = n;
		}
		words += n + (bar ? 1 : 0);
	}
	return best;
}

/*
 * Whether the word at p (n bytes) in t is switched off: a negation right
 * before it ("no fsdp", "without sequence parallel", "non-fsdp", "w/o
 * sp", "without --tp-comm-overlap") or a zero / off right after it
 * ("fsdp=0", "fsdp: false", "sp off", "fsdp disabled", "--tp-comm-overlap
 * not set").
 */
int vtext_negated(const char *t, const char *p, size_t n)
{
	static const char *const before[] = {"no ", "no-", "non-", "non ", "without ", "w/o ",
					     "not ", "disable ", "disabled "};
	static const char *const after[] = {"=0", "= 0", ": 0", ":0", "=false", "= false",
					    ": false", ":false", "=off", ": off", " off", "=no",
					    ": no", " disabled", "=none", " false", " = 0",
					    " 0)", " not set", " not given", " not enabled",
					    " not used", " unset"};
	const char *a = p + n;

	/* "fsdp2" / "fa3": a version is part of the word */
	while (isdigit((unsigned char)*a))
		a++;
	/* a command line's flag: its dashes are part of the word, so "without
	   --tp-comm-overlap" is read as "without tp-comm-overlap" */
	for (int dashes = 0; dashes < 2 && p > t && p[-1] == '-'; dashes++)
		p--;
	for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) {
		size_t m = strlen(before[i]);

		if ((size_t)(p - t) >= m && !strncmp(p - m, before[i], m) &&
		    ((size_t)(p - t) == m || !wordc(p[-(ptrdiff_t)m - 1])))
			return 1;
	}
	for (size_t i = 0; i < sizeof after / sizeof after[0]; i++)
		if (!strncmp(a, after[i], strlen(after[i])))
			return 1;
	return 0;
}

/* The number after word w in t ("shard group 64", "replicate=8"), with
 * an optional "/B" after it; 0 when none. */
static double number_after(const char *t, const char *w, double *second)
{
	const char *p = vtext_find(t, w);
	char *end;
	double v;

	*second = 0;
	if (!p)
		return 0;
	p += strlen(w);
	while (*p == ' ' || *p == '=' || *p == ':' || *p == '_' || *p == '-' || *p == '(')
		p++;
	if (!isdigit((unsigned char)*p))
		return 0;
	v = strtod(p, &end);
	if (*end == '/' && isdigit((unsigned char)end[1]))
		*second = strtod(end + 1, &end);
	return v;
}

/* The ZeRO stage written after "zero" / "stage" at p: "zero-1", "zero 2",
 * "zero stage 3", "zero3", "zero=0"; -1 when none. */
static int stage_at(const char *p)
{
	while (*p && !isdigit((unsigned char)*p) && (*p == '-' || *p == ' ' || *p == '_' ||
						   *p == '=' || *p == ':' || isalpha((unsigned char)*p))) {
		/* only the word "stage" may stand between "zero" and its digit */
		if (isalpha((unsigned char)*p)) {
			if (strncmp(p, "stage", 5))
				return -1;
			p += 5;
			continue;
		}
		p++;
	}
	return *p >= '0' && *p <= '3' && !isdigit((unsigned char)p[1]) ? *p - '0' : -1;
}

int vtext_sharding(const char *text, struct vshard *s)
{
	char t[256];
	const char *p;
	size_t n;
	double second;

	memset(s, 0, sizeof *s);
	s->stage = -1;
	vtext_lower(t, sizeof t, text);
	/* ZeRO-Offload / FSDP CPU offload: optimizer states or parameters in
	 * host memory, which cvc does not price */
	if ((p = first_of(t, "offload|cpu offload|zero-offload|zero-infinity|nvme", &n)) != NULL &&
	    !vtext_negated(t, p, n))
		s->offload = 1;
	/* a bare stage: "0" .. "3" */
	if (t[0] >= '0' && t[0] <= '3' && !t[1]) {
		s->stage = t[0] - '0';
		return 0;
	}
	/* PyTorch FSDP's ShardingStrategy names */
	if (vtext_has(t, "hybrid_shard_zero2|_hybrid_shard_zero2")) {
		s->stage = 2, s->hybrid = 1, s->torch_fsdp = 1;
	} else if (vtext_has(t, "hybrid_shard|hybrid shard|hsdp")) {
		s->stage = 3, s->hybrid = 1, s->torch_fsdp = 1;
	} else if (vtext_has(t, "full_shard|full shard|fully sharded")) {
		s->stage = 3, s->torch_fsdp = 1;
	} else if (vtext_has(t, "shard_grad_op|shard grad op|grad_op")) {
		s->stage = 2, s->torch_fsdp = 1;
	} else if (vtext_has(t, "no_shard")) {
		s->stage = 0, s->torch_fsdp = 1;
	}
	/* ZeRO with its stage; ZeRO++ (hpZ) shards inside a node */
	if ((p = vtext_find(t, "zero++")) != NULL && !vtext_negated(t, p, 6)) {
		s->stage = 3;
		s->hybrid = 1;
	} else if ((p = vtext_find(t, "zero")) != NULL) {
		int st = stage_at(p + 4);

		if (vtext_negated(t, p, 4))
			s->stage = s->stage < 0 ? 0 : s->stage;
		else if (st >= 0)
			s->stage = st;
		else if (s->stage < 0)
			s->stage_unnamed = 1;
	} else if ((p = vtext_find(t, "stage")) != NULL && stage_at(p) >= 0 && s->stage < 0) {
		s->stage = stage_at(p);
	}
	/* FSDP / FSDP2 switched on or off */
	if ((p = first_of(t, "fsdp|megatron-fsdp|megatron fsdp", &n)) != NULL) {
		if (vtext_negated(t, p, n)) {
			s->fsdp_off = 1;
			if (s->stage == 3 && !s->hybrid)
				s->stage = -1; /* "FSDP=0 (ZeRO-3 off)": the words cancel */
		} else {
			s->torch_fsdp |= !vtext_has(t, "megatron-fsdp|megatron fsdp|mcore fsdp");
			if (s->stage < 0)
				s->stage = 3; /* FSDP's default strategy is FULL_SHARD */
		}
	}
	/* Megatron's distributed optimizer is ZeRO-1 */
	if ((p = first_of(t, "distributed optimizer|distributed-optimizer|distributed_optimizer|"
			  "dist opt|dist-opt|dist_opt|distopt|dist. optimizer", &n)) != NULL &&
	    !vtext_negated(t, p, n)) {
		s->dist_opt = 1;
		if (s->stage < 0)
			s->stage = 1;
	}
	/* plain data parallelism: the stack decides whether its optimizer
	 * shards (vrow.c) */
	if (vtext_has(t, "ddp|data parallel|data-parallel|none|no sharding|replicated") ||
	    s->fsdp_off)
		s->ddp = s->stage < 0;
	if (s->ddp)
		s->stage = 0;
	/* the group FSDP shards over: "shard group 64", "HSDP (shard 8,
	 * replicate 16)", "64/8" */
	s->group = number_after(t, "shard group", &second);
	if (!(s->group > 0))
		s->group = number_after(t, "shard_group", &second);
	if (!(s->group > 0))
		s->group = number_after(t, "sharding group", &second);
	if (!(s->group > 0))
		s->group = number_after(t, "shard", &second);
	if (s->group > 0 && second > 0)
		s->replicas = second, s->group_pair = 1;
	if (!(s->replicas > 0)) {
		double r = number_after(t, "replicate", &second);

		if (!(r > 0))
			r = number_after(t, "replicas", &second);
		s->replicas = r;
	}
	if (s->group > 0 && s->stage < 0)
		s->stage = 3;
	return s->stage >= 0 || s->stage_unnamed ? 0 : -1;
}

/* dtype words, by the name in cvc's dtype enum; the first one a cell names
 * is its dtype ("fp8 (bf16 first and last layers)" is fp8). */
static const struct {
	const char *name, *words;
} dtype_words[] = {
	{"nvfp4", "nvfp4|nv-fp4|nv_fp4|nvfp-4"},
	{"mxfp4", "mxfp4|mx-fp4|mx_fp4|fp4-mx|fp4 mx"},
	{"fp8", "fp8|float8|e4m3|mxfp8|mx-fp8|fp8-mx|fp8_mx"},
	{"bf16", "bf16|bfloat16|bf16-mixed|bf-16"},
	{"fp16", "fp16|float16|half|16-mixed|fp-16"},
	{"fp32", "fp32|tf32|float32"},
	{"fp4", "fp4"}, /* a format with no scaling named: nvfp4 on NVIDIA (vrow.c says it) */
};

/* FP8 recipes (Transformer Engine's and the tables' names), by cvc's
 * fp8_recipe names; the first rule that matches wins. */
static const struct {
	const char *name, *words;
} recipe_words[] = {
	{"mxfp8", "mxfp8|mx-fp8|fp8-mx|fp8_mx|fp8 mx|mx|microscaling|mxfp8blockscaling"},
	{"blockwise", "blockwise|block-wise|block wise|block scaling|fine-grained|fine grained|"
		      "1x128|128x128|per-block|deepgemm|float8blockscaling"},
	{"current", "fp8-cs|fp8_cs|current scaling|current-scaling|current|tensorwise|"
		    "per-tensor current|dynamic|rowwise|float8currentscaling|cs"},
	{"delayed", "delayed|delayed scaling|fp8-ds|fp8_ds|amax history|delayedscaling|ds"},
};

int vtext_dtype(const char *text, struct vdtype *d)
{
	char t[256];
	const char *best = NULL;
	size_t n;

	memset(d, 0, sizeof *d);
	vtext_lower(t, sizeof t, text);
	for (size_t i = 0; i < sizeof dtype_words / sizeof dtype_words[0]; i++) {
		const char *p = first_of(t, dtype_words[i].words, &n);

		/* "fp4" inside "nvfp4" is not a word of its own: vtext_find
		 * needs a boundary, so the longer names win by position */
		if (p && (!best || p < best)) {
			best = p;
			d->dtype = dtype_words[i].name;
		}
	}
	if (!d->dtype)
		return -1;
	if (!strcmp(d->dtype, "fp8")) {
		for (size_t i = 0; i < sizeof recipe_words / sizeof recipe_words[0]; i++) {
			const char *p = first_of(t, recipe_words[i].words, &n);

			if (p) {
				d->recipe = recipe_words[i].name;
				snprintf(d->recipe_word, sizeof d->recipe_word, "%.*s", (int)n, p);
				break;
			}
		}
	}
	return 0;
}

/* Megatron-Core's --recompute-modules, by the words tables use for them. */
static const struct {
	const char *module, *words;
} module_words[] = {
	{"mla_up_proj", "mla up-proj|mla up proj|mla_up_proj|up-proj|up proj|up-projection"},
	{"layernorm", "layernorm|layer norm|rmsnorm|rms norm|norm|norms"},
	{"core_attn", "core_attn|core attention|core-attention|attention"},
	/* Megatron-MoE-ModelZoo's tables write "norm, act, shared_expert" */
	{"moe_act", "moe_act|moe act|moe activation|expert activation|act"},
	{"shared_experts", "shared_experts|shared_expert|shared expert|shared experts"},
	{"mlp", "mlp"},
	{"moe", "moe"},
};

int vtext_recompute(const char *text, struct vrecompute *rc)
{
	char t[256];
	size_t n;
	const char *p;

	memset(rc, 0, sizeof *rc);
	rc->kind = -1;
	vtext_lower(t, sizeof t, text);
	if (vtext_has(t, "selective|partial|core attention|some layers|sac|op-level")) {
		rc->kind = CVC_PROJ_RECOMP_SELECTIVE;
	} else if ((p = first_of(t, "full|block|uniform|all layers|true|yes|on|every layer|"
				  "activation checkpointing|checkpointing|checkpoint|ac", &n)) != NULL &&
		   !vtext_negated(t, p, n)) {
		rc->kind = CVC_PROJ_RECOMP_FULL;
	} else if (vtext_has(t, "none|no|false|off|0|disabled|n")) {
		rc->kind = CVC_PROJ_RECOMP_NONE;
	}
	/* the modules a selective recompute names, in Megatron-Core's words */
	for (size_t i = 0; i < sizeof module_words / sizeof module_words[0]; i++) {
		char *at = (char *)first_of(t, module_words[i].words, &n);
		size_t len = strlen(rc->modules);

		if (!at)
			continue;
		/* blank the words out so "moe" does not match inside what
		 * "moe_act" already took */
		memset(at, ' ', n);
		snprintf(rc->modules + len, sizeof rc->modules - len, "%s%s", len ? "," : "",
			 module_words[i].module);
	}
	if (rc->modules[0] && rc->kind < 0)
		rc->kind = CVC_PROJ_RECOMP_SELECTIVE;
	return rc->kind >= 0 ? 0 : -1;
}

int vtext_switch_lower(const char *t, const char *words)
{
	size_t n;
	const char *p = first_of(t, words, &n);

	return p ? !vtext_negated(t, p, n) : -1;
}

int vtext_switch(const char *text, const char *words)
{
	char t[512];

	vtext_lower(t, sizeof t, text);
	return vtext_switch_lower(t, words);
}
