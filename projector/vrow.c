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

static int has_word(const char *s, const char *w)
{
	return strstr(s, w) != NULL;
}

/* dtype text: "bf16 (amp)", "BF16", "bfloat16", "fp8 (delayed)", "FP8-MX". */
static int parse_dtype(const char *text, int *dtype)
{
	char t[128];

	snprintf(t, sizeof t, "%.*s", (int)sizeof t - 1, text);
	lower(t);
	if (has_word(t, "fp8") || has_word(t, "float8") || has_word(t, "e4m3"))
		*dtype = CVC_PROJ_FP8;
	else if (has_word(t, "bf16") || has_word(t, "bfloat16"))
		*dtype = CVC_PROJ_BF16;
	else if (has_word(t, "fp16") || has_word(t, "float16") || has_word(t, "half"))
		*dtype = CVC_PROJ_FP16;
	else if (has_word(t, "fp32") || has_word(t, "tf32") || has_word(t, "float32"))
		*dtype = CVC_PROJ_FP32;
	else
		return -1;
	return 0;
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

	snprintf(t, sizeof t, "%.*s", (int)sizeof t - 1, text);
	lower(t);
	*hybrid = has_word(t, "hybrid");
	/* FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, NO_SHARD: PyTorch FSDP's
	 * ShardingStrategy names */
	*torch_fsdp = has_word(t, "fsdp") || has_word(t, "full_shard") ||
		      has_word(t, "shard_grad_op") || has_word(t, "hybrid_shard") ||
		      has_word(t, "no_shard");
	v = strtod(t, &end);
	if (end != t && !*end && v >= 0 && v <= 3 && v == floor(v)) {
		*zero = v;
		return 0;
	}
	if (has_word(t, "zero-3") || has_word(t, "zero3") || has_word(t, "zero 3") ||
	    has_word(t, "full_shard") || has_word(t, "full shard") || has_word(t, "hybrid_shard"))
		*zero = 3;
	else if (has_word(t, "zero-2") || has_word(t, "zero2") || has_word(t, "zero 2") ||
		 has_word(t, "shard_grad_op") || has_word(t, "grad_op"))
		*zero = 2;
	else if (has_word(t, "zero-1") || has_word(t, "zero1") || has_word(t, "zero 1") ||
		 has_word(t, "distributed optimizer") || has_word(t, "distopt") ||
		 has_word(t, "dist-opt") || has_word(t, "dist_opt"))
		*zero = 1;
	else if (has_word(t, "fsdp"))
		*zero = 3; /* FSDP's default strategy is FULL_SHARD */
	else if (has_word(t, "no_shard") || has_word(t, "ddp") || has_word(t, "none") ||
		 has_word(t, "zero-0"))
		*zero = 0;
	else
		return -1;
	return 0;
}

static int parse_recompute(const char *text, int *rc)
{
	char t[128];

	snprintf(t, sizeof t, "%.*s", (int)sizeof t - 1, text);
	lower(t);
	if (has_word(t, "selective") || has_word(t, "core attention"))
		*rc = CVC_PROJ_RECOMP_SELECTIVE;
	else if (has_word(t, "full") || has_word(t, "block") || has_word(t, "uniform") ||
		 !strcmp(t, "true") || !strcmp(t, "yes") || !strcmp(t, "on"))
		*rc = CVC_PROJ_RECOMP_FULL;
	else if (has_word(t, "none") || !strcmp(t, "no") || !strcmp(t, "false") ||
		 !strcmp(t, "off") || !strcmp(t, "0"))
		*rc = CVC_PROJ_RECOMP_NONE;
	else
		return -1;
	return 0;
}

static int parse_flag(const char *text, int *v)
{
	char t[32];

	snprintf(t, sizeof t, "%.*s", (int)sizeof t - 1, text);
	lower(t);
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

int vrow_read(struct vrow *r, const struct vrow_map *map, char **names, char **cells,
	      cvc_proj_ctx *ctx, int legacy, int default_conv)
{
	cvc_proj_scenario *sc = &r->sc;
	int dtype_given = 0, recompute_given = 0, zero_given = 0, gpu_given = 0, ffn_type_given = 0;
	int tp_given = 0, pp_given = 0, hybrid = 0, torch_fsdp = 0, framework_given = 0;
	char buf[512];

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
	for (size_t c = 0; c < map->n; c++) {
		const struct vcol *col = &map->col[c];
		const char *k = names[c];
		int guess = 0;
		char *t;

		if (col->role == V_CARRY)
			continue;
		t = clean(cells[c], buf, sizeof buf, &guess);
		if (is_empty(t))
			continue;
		switch (col->role) {
		case V_TPS:
		case V_ITER:
		case V_TFLOPS:
		case V_MFU: {
			double v;

			if (proj_parse_number(t, &v) || !(v > 0))
				return bad_cell(r, k, "a positive number");
			if (col->role == V_TPS)
				r->tps = v;
			else if (col->role == V_ITER)
				r->iter = v;
			else if (col->role == V_TFLOPS)
				r->tflops = v;
			else
				r->mfu = v;
			if (guess)
				vrow_note(r, "measured %s=%s (guess)", k, t);
			break;
		}
		case V_CONV: {
			int cv = proj_flops_parse(t);

			if (cv < 0) {
				snprintf(buf, sizeof buf, "a FLOP convention (%s)", proj_flops_names());
				return bad_cell(r, k, buf);
			}
			r->conv = cv;
			break;
		}
		case V_ZERO: {
			double z;

			if (parse_zero(t, &z, &hybrid, &torch_fsdp))
				return bad_cell(r, k, "a ZeRO stage 0-3 or an FSDP / ZeRO strategy");
			sc->zero = z;
			zero_given = 1;
			if (!isdigit((unsigned char)t[0]) || guess)
				vrow_note(r, "zero=%g ('%s'%s)", z, t, guess ? ", guess" : "");
			break;
		}
		case V_GPU: {
			char head[128], paren[256];
			const cvc_hw_spec *spec;

			split_paren(t, head, sizeof head, paren, sizeof paren);
			spec = ctx->cat ? cvc_hw_catalog_lookup(ctx->cat, head) : NULL;
			if (!spec && ctx->cat)
				spec = cvc_hw_catalog_lookup(ctx->cat, t);
			if (!spec)
				return cannot(r, "gpu '%s' is not in the hardware catalog", t);
			snprintf(r->gpu, sizeof r->gpu, "%s", spec->name);
			sc->gpu = r->gpu;
			gpu_given = 1;
			if (strcmp(head, spec->name) || guess)
				vrow_note(r, "gpu=%s ('%s'%s)", spec->name, t, guess ? ", guess" : "");
			r->net_gbps = network_gbps(paren);
			break;
		}
		case V_DTYPE: {
			int d;

			if (parse_dtype(t, &d))
				return bad_cell(r, k, "a dtype (bf16, fp16, fp8, fp32)");
			sc->dtype = d;
			dtype_given = 1;
			if (guess)
				vrow_note(r, "dtype=%s (guess)", t);
			break;
		}
		case V_RECOMP: {
			int v;

			if (parse_recompute(t, &v))
				return bad_cell(r, k, "none, selective or full");
			sc->recompute = v;
			recompute_given = 1;
			break;
		}
		case V_FIELD: {
			const struct proj_field *fd = &proj_fields[col->field];

			switch (fd->type) {
			case PF_NUM: {
				double v;

				if (proj_parse_number(t, &v))
					return bad_cell(r, k, "a number");
				if (v < 0)
					return bad_cell(r, k, "a number >= 0");
				proj_field_set_num(sc, col->field, v);
				break;
			}
			case PF_FLAG: {
				int v;

				if (parse_flag(t, &v))
					return bad_cell(r, k, "true or false");
				proj_field_set_num(sc, col->field, v);
				break;
			}
			case PF_ENUM: {
				char w[64];
				int v;

				/* longer than any enum name: truncating keeps it unmatched */
				snprintf(w, sizeof w, "%.*s", (int)sizeof w - 1, t);
				lower(w);
				v = proj_enum_index(fd->names, w);
				if (v < 0) {
					snprintf(buf, sizeof buf, "one of %s", fd->names);
					return bad_cell(r, k, buf);
				}
				proj_field_set_num(sc, col->field, v);
				if (!strcmp(fd->key, "ffn_type"))
					ffn_type_given = 1;
				break;
			}
			case PF_STR:
				/* the label; gpu has its own role */
				snprintf(r->name, sizeof r->name, "%.*s", (int)sizeof r->name - 1, t);
				sc->model = r->name;
				break;
			}
			if (!strcmp(fd->key, "tp"))
				tp_given = 1;
			if (!strcmp(fd->key, "pp"))
				pp_given = 1;
			mark_given(r, col->field);
			if (guess)
				vrow_note(r, "%s=%s (guess)", fd->key, t);
			if (!strcmp(fd->key, "framework"))
				framework_given = 1;
			break;
		}
		default:
			break;
		}
	}
	if (!tp_given && !pp_given && !legacy)
		return cannot(r, "layout not given (tp, pp)");
	if (!gpu_given && !legacy)
		vrow_note(r, "gpu=%s (default)", sc->gpu);
	if (!dtype_given && !legacy)
		vrow_note(r, "dtype=bf16 (default)");
	if (!recompute_given && !legacy)
		vrow_note(r, "recompute=%s (default)",
			  sc->recompute == CVC_PROJ_RECOMP_SELECTIVE ? "selective" : "none");
	if (!framework_given && !legacy) {
		/* the stack a run names through its sharding wording; runs that
		 * name none are taken as Megatron-Core's, configured as its
		 * recipes (NeMo, Megatron-LM's examples) run it */
		sc->framework = torch_fsdp ? CVC_PROJ_FW_PYTORCH : CVC_PROJ_FW_MEGATRON;
		vrow_note(r, "framework=%s (%s)", torch_fsdp ? "pytorch" : "megatron",
			  torch_fsdp ? "PyTorch FSDP's sharding names" : "default");
	}
	if (sc->framework == CVC_PROJ_FW_MEGATRON && !legacy) {
		int f;

		if (!zero_given) {
			sc->zero = 1;
			vrow_note(r, "zero=1 (Megatron-Core's distributed optimizer)");
			zero_given = 1;
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
	if (!zero_given && !legacy)
		vrow_note(r, "zero=%g (default)", sc->zero);
	if (hybrid && !(sc->shard_group > 0)) {
		double gpn = sc->gpus_per_node >= 1 ? sc->gpus_per_node : 8;
		double per = (sc->tp >= 1 ? sc->tp : 1) * (sc->cp >= 1 ? sc->cp : 1);

		sc->shard_group = fmax(1, floor(gpn / per));
		vrow_note(r, "shard_group=%g (hybrid sharding: shard inside a node, replicate "
			     "across)", sc->shard_group);
	}
	r->hybrid = hybrid;
	/* A gated FFN (SwiGLU, GeGLU) is sized about 8h/3..3.5h to keep the
	 * parameters of a 4h two-matrix FFN; one at 4h or wider is taken as
	 * two matrices (GELU, squared ReLU). */
	if (!ffn_type_given && sc->ffn > 0 && sc->hidden > 0) {
		sc->ffn_type = sc->ffn < 4 * sc->hidden ? CVC_PROJ_FFN_SWIGLU : CVC_PROJ_FFN_GELU;
		vrow_note(r, "ffn_type=%s (ffn %s 4 x hidden)",
			  sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? "swiglu" : "gelu",
			  sc->ffn_type == CVC_PROJ_FFN_SWIGLU ? "<" : ">=");
		mark_given(r, proj_field_find("model", "ffn_type"));
	}
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
	if (r->net_gbps > 0) {
		const cvc_hw_spec *spec = cvc_hw_catalog_lookup(ctx->cat, sc->gpu);
		double gpn = sc->gpus_per_node >= 1 ? sc->gpus_per_node : 8;
		double per_gpu = r->net_gbps / gpn;

		if (spec && spec->inter_bw_gbps > 0) {
			sc->scale_inter_bw = per_gpu / spec->inter_bw_gbps;
			vrow_note(r, "network %.4g GB/s per GPU (%.4g Gb/s per node, from the gpu text)",
				  per_gpu, r->net_gbps * 8);
		}
	}
	return 0;
}
