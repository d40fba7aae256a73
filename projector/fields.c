/*
 * fields.c - the table of scenario fields: YAML section and key, type,
 * place in cvc_proj_scenario.  The parser, the expander, the `where:`
 * language and the CSV/JSON writers all walk this one table, so a new field
 * is one line here plus its use in the workload.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proj_internal.h"

#define NUM(sec, key, member) {sec, key, PF_NUM, offsetof(cvc_proj_scenario, member), NULL, 0}
#define AUTO(sec, key, member) {sec, key, PF_NUM, offsetof(cvc_proj_scenario, member), NULL, 1}
#define ENUM(sec, key, member, names) \
	{sec, key, PF_ENUM, offsetof(cvc_proj_scenario, member), names, 0}
#define FLAG(sec, key, member) {sec, key, PF_FLAG, offsetof(cvc_proj_scenario, member), NULL, 0}
#define STR(sec, key, member) {sec, key, PF_STR, offsetof(cvc_proj_scenario, member), NULL, 0}

const struct proj_field proj_fields[] = {
	STR("model", "name", model),
	NUM("model", "layers", layers),
	NUM("model", "hidden", hidden),
	NUM("model", "heads", heads),
	NUM("model", "kv_heads", kv_heads),
	NUM("model", "head_dim", head_dim),
	NUM("model", "q_lora_rank", q_lora_rank),
	NUM("model", "kv_lora_rank", kv_lora_rank),
	NUM("model", "qk_rope_dim", qk_rope_dim),
	NUM("model", "v_head_dim", v_head_dim),
	NUM("model", "ffn", ffn),
	ENUM("model", "ffn_type", ffn_type, "gelu|swiglu|geglu|relu2"),
	FLAG("model", "tie_embeddings", tie_embeddings),
	NUM("model", "vocab", vocab),
	NUM("model", "seq", seq),
	NUM("model", "experts", experts),
	NUM("model", "top_k", top_k),
	NUM("model", "moe_ffn", moe_ffn),
	NUM("model", "shared_ffn", shared_ffn),
	NUM("model", "moe_latent", moe_latent),
	NUM("model", "moe_first_dense", moe_first_dense),
	NUM("model", "moe_layer_freq", moe_layer_freq),
	NUM("model", "mtp_layers", mtp_layers),
	NUM("training", "global_batch", global_batch),
	NUM("training", "micro_batch", micro_batch),
	ENUM("training", "dtype", dtype, "bf16|fp16|fp8|fp32|nvfp4|mxfp4"),
	ENUM("training", "recompute", recompute, "none|selective|full"),
	STR("training", "recompute_modules", recompute_modules),
	ENUM("training", "optimizer", optimizer, "adam|sgd"),
	ENUM("training", "attention", attention, "flash|unfused|cudnn|fa2|fa4|fa1"),
	ENUM("training", "framework", framework, "megatron|pytorch|torchtitan"),
	ENUM("training", "fp8_recipe", fp8_recipe, "delayed|current|mxfp8|blockwise"),
	FLAG("training", "fp8_attention", fp8_attention),
	FLAG("training", "dropout", dropout),
	NUM("training", "zero", zero),
	NUM("training", "shard_group", shard_group),
	AUTO("parallelism", "tp", tp),
	AUTO("parallelism", "pp", pp),
	AUTO("parallelism", "vpp", vpp),
	NUM("parallelism", "dp", dp),
	NUM("parallelism", "cp", cp),
	NUM("parallelism", "ep", ep),
	NUM("parallelism", "etp", etp),
	FLAG("parallelism", "sp", sp),
	NUM("parallelism", "first_stage_layers", first_stage_layers),
	NUM("parallelism", "last_stage_layers", last_stage_layers),
	NUM("parallelism", "tp_row", tp_row),
	NUM("parallelism", "tp_col", tp_col),
	NUM("parallelism", "tp_depth", tp_depth),
	STR("hardware", "gpu", gpu),
	NUM("hardware", "gpus", gpus),
	NUM("hardware", "nodes", nodes),
	NUM("hardware", "gpus_per_node", gpus_per_node),
	NUM("hardware", "scale_compute", scale_compute),
	NUM("hardware", "scale_hbm_bw", scale_hbm_bw),
	NUM("hardware", "scale_hbm_cap", scale_hbm_cap),
	NUM("hardware", "scale_intra_bw", scale_intra_bw),
	NUM("hardware", "scale_inter_bw", scale_inter_bw),
	FLAG("comm", "dp_overlap", dp_overlap),
	AUTO("comm", "bucket_mb", bucket_mb),
	FLAG("comm", "tp_overlap", tp_overlap),
	FLAG("comm", "tp_overlap_ag", tp_overlap_ag),
	FLAG("comm", "tp_overlap_rs", tp_overlap_rs),
	FLAG("comm", "ep_overlap", ep_overlap),
	ENUM("comm", "ep_dispatcher", ep_dispatcher, "alltoall|flex|allgather|deepep|hybridep"),
	FLAG("comm", "ep_dispatch_fp8", ep_dispatch_fp8),
	NUM("comm", "moe_router_group_topk", moe_router_group_topk),
	NUM("comm", "local_sgd_h", local_sgd_h),
	FLAG("comm", "outer_overlap", outer_overlap),
	NUM("comm", "clusters", clusters),
	NUM("comm", "inter_cluster_gbps", inter_cluster_gbps),
	NUM("comm", "contention", contention),
	NUM("cost", "train_tokens", train_tokens),
	NUM("cost", "usd_per_gpu_hour", usd_per_gpu_hour),
	NUM("cost", "gpu_power_w", gpu_power_w),
	NUM("cost", "pue", pue),
	/* after the fields of older files, so their CSV columns keep their places */
	STR("model", "layer_pattern", layer_pattern),
	NUM("model", "mamba_heads", mamba_heads),
	NUM("model", "mamba_head_dim", mamba_head_dim),
	NUM("model", "mamba_state", mamba_state),
	NUM("model", "mamba_groups", mamba_groups),
	NUM("model", "mamba_conv", mamba_conv),
	NUM("model", "mamba_chunk", mamba_chunk),
	NUM("model", "window", window),
	NUM("model", "window_skip_freq", window_skip_freq),
	FLAG("model", "window_chunked", window_chunked),
	NUM("hardware", "nvlink_domain", nvlink_domain),
	NUM("model", "moe_imbalance", moe_imbalance),
	FLAG("training", "moe_router_fusion", moe_router_fusion),
	FLAG("training", "moe_permute_fusion", moe_permute_fusion),
	ENUM("parallelism", "pp_schedule", pp_schedule, "1f1b|dualpipe"),
	AUTO("comm", "ep_sms", ep_sms),
	STR("parallelism", "pp_layout", pp_layout),
	FLAG("training", "cuda_graphs", cuda_graphs),
	FLAG("training", "compile", compile),
	NUM("training", "bf16_layers_first", bf16_layers_first),
	NUM("training", "bf16_layers_last", bf16_layers_last),
	FLAG("training", "moe_token_drop", moe_token_drop),
	AUTO("hardware", "host_launch_us", host_launch_us),
	FLAG("training", "grad_reduce_fp32", grad_reduce_fp32),
	FLAG("training", "fp8_param_gather", fp8_param_gather),
	ENUM("training", "optimizer_moments", optimizer_moments, "fp32|bf16"),
	NUM("training", "cpu_offload_layers", cpu_offload_layers),
	STR("training", "offload_modules", offload_modules),
	FLAG("training", "fused_grouped_mlp", fused_grouped_mlp),
};
const size_t proj_nfields = sizeof proj_fields / sizeof proj_fields[0];

/* Spellings people use for the same field. */
static const struct { const char *alias, *key; } aliases[] = {
	{"ffn_size", "ffn"}, {"ffn_hidden_size", "ffn"}, {"ffn_hidden", "ffn"},
	{"seq_length", "seq"}, {"seq_len", "seq"}, {"num_layers", "layers"},
	{"hidden_size", "hidden"}, {"attention_heads", "heads"},
	{"num_experts", "experts"}, {"topk", "top_k"}, {"moe_top_k", "top_k"},
	{"moe_router_topk", "top_k"}, {"moe_ffn_hidden_size", "moe_ffn"},
	{"moe_shared_expert_intermediate_size", "shared_ffn"},
	{"moe_latent_size", "moe_latent"},
	{"first_k_dense_replace", "moe_first_dense"}, {"first_k_dense", "moe_first_dense"},
	{"mtp_num_layers", "mtp_layers"}, {"num_nextn_predict_layers", "mtp_layers"},
	{"interleave", "vpp"}, {"virtual_stages", "vpp"},
	{"sequence_parallel", "sp"}, {"context_parallel", "cp"},
	{"expert_parallel", "ep"}, {"activation_recompute", "recompute"},
	{"zero_stage", "zero"}, {"gpu_per_node", "gpus_per_node"},
	{"lsgd_h", "local_sgd_h"}, {"sync_interval", "local_sgd_h"},
	{"streaming", "outer_overlap"},
	{"overlap_moe_expert_parallel_comm", "ep_overlap"},
	{"moe_token_dispatcher_type", "ep_dispatcher"}, {"topk_group", "moe_router_group_topk"},
	{"moe_flex_dispatcher_num_sms", "ep_sms"}, {"moe_deepep_num_sms", "ep_sms"},
	{"moe_hybridep_num_sms", "ep_sms"}, {"pipeline_schedule", "pp_schedule"},
	{"cuda_graph", "cuda_graphs"}, {"cuda_graph_impl", "cuda_graphs"},
	{"cutedsl_fused_grouped_mlp", "fused_grouped_mlp"},
	{"moe_pad_expert_input_to_capacity", "moe_token_drop"},
	{"grad_reduce_in_fp32", "grad_reduce_fp32"},
	{"accumulate_allreduce_grads_in_fp32", "grad_reduce_fp32"},
	{"fp8_params", "fp8_param_gather"},
	{"exp_avg_dtype", "optimizer_moments"},
	{"cpu_offloading_num_layers", "cpu_offload_layers"},
	{"share_embeddings_and_output_weights", "tie_embeddings"},
	{"kv_channels", "head_dim"}, {"qk_head_dim", "head_dim"}, {"qk_nope_head_dim", "head_dim"},
	{"qk_pos_emb_head_dim", "qk_rope_dim"}, {"qk_rope_head_dim", "qk_rope_dim"},
	{"tie_word_embeddings", "tie_embeddings"},
	{"tokens", "train_tokens"},
	/* the column names of published-run tables (validate) */
	{"model", "name"}, {"moe_experts", "experts"}, {"moe_topk", "top_k"},
	{"seq_parallel", "sp"}, {"zero_fsdp", "zero"},
	{"decoder_first_pipeline_num_layers", "first_stage_layers"},
	{"expert_tensor_parallel", "etp"}, {"moe_expert_tensor_parallel_size", "etp"},
	{"nvl_domain", "nvlink_domain"}, {"hsdp_shard", "shard_group"},
	{"num_layers_at_start_in_bf16", "bf16_layers_first"},
	{"num_layers_at_end_in_bf16", "bf16_layers_last"},
	{"decoder_last_pipeline_num_layers", "last_stage_layers"},
	/* hybrid and local-attention models: Megatron-Core's arguments and
	 * Hugging Face's config.json keys */
	{"hybrid_override_pattern", "layer_pattern"}, {"hybrid_layer_pattern", "layer_pattern"},
	{"mamba_num_heads", "mamba_heads"}, {"mamba_state_dim", "mamba_state"},
	{"ssm_state_size", "mamba_state"}, {"mamba_num_groups", "mamba_groups"},
	{"n_groups", "mamba_groups"}, {"conv_kernel", "mamba_conv"}, {"d_conv", "mamba_conv"},
	{"chunk_size", "mamba_chunk"}, {"sliding_window", "window"}, {"window_size", "window"},
	{"window_attn_skip_freq", "window_skip_freq"},
	{"pipeline_model_parallel_layout", "pp_layout"}, {"pipeline_layout", "pp_layout"},
	/* AxoNN's Megatron-LM arguments (axonn-ai/Megatron-AxoNN) */
	{"row_tensor_model_parallel_size", "tp_row"},
	{"column_tensor_model_parallel_size", "tp_col"},
	{"depth_tensor_model_parallel_size", "tp_depth"},
};

/*
 * A boolean as YAML writes it, in any of the three spellings its schemas
 * give (1.2 core: true, True, TRUE; 1.1 adds yes/no, on/off): letter case
 * aside, so 'True' reads as 'true' does.  1 and 0 too.
 */
int proj_parse_flag(const char *s, int *out)
{
	if (!strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") ||
	    !strcmp(s, "1"))
		*out = 1;
	else if (!strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off") ||
		 !strcmp(s, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

int proj_parse_graphs(const char *s, int *out)
{
	if (!proj_parse_flag(s, out))
		return 0;
	/* Megatron-Core's --cuda-graph-impl values (and "layers", "full") */
	if (!strcasecmp(s, "none"))
		*out = 0;
	else if (!strcasecmp(s, "layers") || !strcasecmp(s, "transformer_engine") ||
		 !strcasecmp(s, "local"))
		*out = 1;
	else if (!strcmp(s, "2") || !strcasecmp(s, "full") || !strcasecmp(s, "full_iteration") ||
		 !strcasecmp(s, "full-iteration"))
		*out = 2;
	else
		return -1;
	return 0;
}

int proj_parse_field_flag(const struct proj_field *fd, const char *s, int *out)
{
	return strcmp(fd->key, "cuda_graphs") ? proj_parse_flag(s, out) : proj_parse_graphs(s, out);
}

int proj_parse_number(const char *s, double *out)
{
	char *end = NULL;
	double v, mul = 1;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	/* 4K, 1M, 1.5T: capacity planners write token counts that way */
	if (*end == 'K' || *end == 'k')
		mul = 1e3, end++;
	else if (*end == 'M')
		mul = 1e6, end++;
	else if (*end == 'G' || *end == 'B')
		mul = 1e9, end++;
	else if (*end == 'T')
		mul = 1e12, end++;
	if (*end)
		return -1;
	*out = v * mul;
	return 0;
}

static int key_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char ca = *a == '-' ? '_' : *a, cb = *b == '-' ? '_' : *b;

		if (ca != cb)
			return 0;
	}
	return *a == *b;
}

int proj_field_alias(size_t i, const char **alias, const char **key)
{
	if (i >= sizeof aliases / sizeof aliases[0])
		return -1;
	*alias = aliases[i].alias;
	*key = aliases[i].key;
	return 0;
}

int proj_field_find(const char *section, const char *key)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (key_eq(key, aliases[i].alias)) {
			key = aliases[i].key;
			break;
		}
	for (size_t i = 0; i < proj_nfields; i++)
		if (key_eq(key, proj_fields[i].key) &&
		    (!section || strcmp(section, proj_fields[i].section) == 0))
			return (int)i;
	return -1;
}

double proj_field_get(const cvc_proj_scenario *sc, int f)
{
	const char *p = (const char *)sc + proj_fields[f].offset;

	switch (proj_fields[f].type) {
	case PF_NUM:
		return *(const double *)p;
	case PF_ENUM:
	case PF_FLAG:
		return *(const int *)p;
	case PF_STR:
		break;
	}
	return 0;
}

void proj_field_set_num(cvc_proj_scenario *sc, int f, double v)
{
	char *p = (char *)sc + proj_fields[f].offset;

	switch (proj_fields[f].type) {
	case PF_NUM:
		*(double *)p = v;
		break;
	case PF_ENUM:
	case PF_FLAG:
		*(int *)p = (int)v;
		break;
	case PF_STR:
		break;
	}
}

int proj_enum_index(const char *names, const char *word)
{
	size_t n = strlen(word);
	int idx = 0;

	for (const char *p = names; *p; idx++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && strncmp(p, word, n) == 0)
			return idx;
		p += len + (bar ? 1 : 0);
	}
	return -1;
}

void proj_enum_name(const char *names, int idx, char *buf, size_t len)
{
	int i = 0;

	if (len)
		buf[0] = 0;
	for (const char *p = names; *p; i++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (i == idx) {
			if (n >= len)
				n = len ? len - 1 : 0;
			if (len) {
				memcpy(buf, p, n);
				buf[n] = 0;
			}
			return;
		}
		p += n + (bar ? 1 : 0);
	}
}

void cvc_proj_scenario_default(cvc_proj_scenario *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->study = "";
	sc->model = "";
	sc->gpu = "A100-SXM-80GB";
	/* a GPT-3 1.3B-like shape, so an empty file still projects something */
	sc->layers = 24;
	sc->hidden = 2048;
	sc->heads = 16;
	sc->kv_heads = 0;   /* = heads */
	sc->ffn = 0;        /* = 4h (gelu) or 8h/3 rounded to 256 (swiglu) */
	sc->ffn_type = CVC_PROJ_FFN_GELU;
	sc->tie_embeddings = 1;
	sc->vocab = 51200;
	sc->seq = 2048;
	sc->experts = 1;
	sc->top_k = 1;
	sc->moe_layer_freq = 1;
	sc->moe_imbalance = 1;
	sc->global_batch = 512;
	sc->micro_batch = 1;
	sc->dtype = CVC_PROJ_BF16;
	/* Megatron-Core's and PyTorch's default (docs/MODELS.md "Recompute") */
	sc->recompute = CVC_PROJ_RECOMP_NONE;
	sc->recompute_modules = "";
	sc->optimizer = CVC_PROJ_ADAM;
	sc->attention = CVC_PROJ_ATTN_FLASH;
	sc->zero = 0;
	sc->tp = 1;
	sc->pp = 1;
	sc->vpp = 1;
	sc->dp = 0;         /* derived: gpus / (tp pp cp) */
	sc->cp = 1;
	sc->ep = 1;
	sc->sp = 0;
	sc->gpus = 0;       /* = nodes * gpus_per_node, or tp pp cp dp */
	sc->nodes = 0;
	sc->gpus_per_node = 8;
	sc->scale_compute = sc->scale_hbm_bw = sc->scale_hbm_cap = 1;
	sc->scale_intra_bw = sc->scale_inter_bw = 1;
	sc->dp_overlap = 1;
	sc->bucket_mb = PROJ_AUTO; /* the framework's own (proj_bucket_bytes()) */
	sc->tp_overlap = 0;
	sc->compile = 1; /* torchtitan: torch.compile per block, as its benchmarks ran */
	sc->tp_overlap_ag = -1;
	sc->tp_overlap_rs = -1;
	sc->ep_sms = PROJ_AUTO; /* the backend's own (cvc_model_ep_default_sms()) */
	sc->host_launch_us = PROJ_AUTO; /* measured (cvc_model_host_launch_us()) */
	sc->grad_reduce_fp32 = -1; /* auto: proj_finalize() */
	sc->cpu_offload_layers = 0;
	sc->offload_modules = "";
	sc->local_sgd_h = 1;
	sc->outer_overlap = 0;
	sc->clusters = 1;
	sc->inter_cluster_gbps = 100;  /* per cluster pair, aggregate */
	sc->contention = 0.1;
	sc->train_tokens = 1e12;
	sc->usd_per_gpu_hour = 2.0;
	sc->gpu_power_w = 0;  /* = catalog TDP */
	sc->pue = 1.2;
	sc->layer_pattern = "";
	sc->pp_layout = "";
	/* Megatron-Core's MambaMixer defaults (d_state 128, headdim 64, ngroups
	 * 8, d_conv 4, chunk_size 128; heads from expand 2) */
	sc->mamba_heads = 0;
	sc->mamba_head_dim = 64;
	sc->mamba_state = 128;
	sc->mamba_groups = 8;
	sc->mamba_conv = 4;
	sc->mamba_chunk = 128;
	sc->window = 0;
	sc->window_skip_freq = 0;
	sc->window_chunked = 0;
}

const char *cvc_proj_comm_name(int kind)
{
	static const char *const names[CVC_PROJ_COMM_N] = {"tp", "pp", "dp", "fsdp",
							   "ep", "cp", "xc"};

	return kind >= 0 && kind < CVC_PROJ_COMM_N ? names[kind] : NULL;
}

/* A module list's words (split by spaces, commas, brackets or quotes),
 * each one of names[0..n) with its bit, OR-ed into *mask; NULL, or the
 * first word that names none (in bad). */
struct module_name {
	const char *name;
	int bit;
};

static const char *module_words(const char *text, const struct module_name *names, size_t n,
				int *mask, char *bad, size_t badlen)
{
	const char *s = text ? text : "";

	*mask = 0;
	while (*s) {
		size_t len = strcspn(s, " \t,[]()'\"");
		size_t i;

		if (len == 0) {
			s++;
			continue;
		}
		for (i = 0; i < n; i++)
			if (strlen(names[i].name) == len && !strncmp(names[i].name, s, len))
				break;
		if (i == n) {
			snprintf(bad, badlen, "%.*s", (int)(len < 64 ? len : 64), s);
			return bad;
		}
		*mask |= names[i].bit;
		s += len;
	}
	return NULL;
}

const char *proj_recompute_modules(const char *text, int *mask, char *bad, size_t badlen)
{
	static const struct module_name mods[] = {
		{"core_attn", PROJ_RC_CORE},   {"moe_act", PROJ_RC_MOE_ACT},
		{"layernorm", PROJ_RC_NORM},   {"mla_up_proj", PROJ_RC_MLA_UP},
		{"mlp", PROJ_RC_MLP},          {"moe", PROJ_RC_MOE},
		{"shared_experts", PROJ_RC_SHARED},
	};

	if (module_words(text, mods, sizeof mods / sizeof mods[0], mask, bad, badlen))
		return bad;
	if (*mask == 0)
		*mask = PROJ_RC_CORE;
	return NULL;
}

const char *proj_offload_modules(const char *text, int *mask, char *bad, size_t badlen)
{
	static const struct module_name mods[] = {
		{"attn_norm", PROJ_OF_ATTN_NORM}, {"qkv_linear", PROJ_OF_QKV},
		{"core_attn", PROJ_OF_CORE},      {"attn_proj", PROJ_OF_PROJ},
		{"mlp_norm", PROJ_OF_MLP_NORM},   {"expert_fc1", PROJ_OF_FC1},
		{"moe_act", PROJ_OF_ACT},         {"fused_group_mlp", PROJ_OF_FUSED},
	};

	return module_words(text, mods, sizeof mods / sizeof mods[0], mask, bad, badlen);
}

const char *proj_modules_bad(const char *key, const char *text, char *bad, size_t badlen,
			     const char **names)
{
	int mask;

	if (!strcmp(key, "recompute_modules")) {
		*names = "core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts";
		return proj_recompute_modules(text, &mask, bad, badlen);
	}
	if (!strcmp(key, "offload_modules")) {
		*names = "attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm, expert_fc1, "
			 "moe_act, fused_group_mlp";
		return proj_offload_modules(text, &mask, bad, badlen);
	}
	return NULL;
}

/* A field's value from its text as the CSV writer prints it (field_text in
 * output.c): -1 when the text is not one. */
static int field_from_text(cvc_proj_scenario *sc, int f, const char *s)
{
	const struct proj_field *fd = &proj_fields[f];
	double v;
	int b;

	switch (fd->type) {
	case PF_STR:
		*(const char **)((char *)sc + fd->offset) = s;
		return 0;
	case PF_ENUM:
		b = proj_enum_index(fd->names, s);
		if (b < 0)
			return -1;
		proj_field_set_num(sc, f, b);
		return 0;
	case PF_FLAG:
		if (proj_parse_field_flag(fd, s, &b))
			return -1;
		proj_field_set_num(sc, f, b);
		return 0;
	case PF_NUM:
		if (fd->allow_auto && strcmp(s, "auto") == 0)
			v = PROJ_AUTO;
		else if (proj_parse_number(s, &v))
			return -1;
		proj_field_set_num(sc, f, v);
		return 0;
	}
	return -1;
}

double proj_params_total_b(const cvc_proj_scenario *in, double *active_b)
{
	cvc_proj_scenario sc = *in;
	struct proj_shape x;
	struct proj_params P;

	/* the layout does not change the count */
	sc.gpus = 1;
	sc.ep = sc.tp = sc.pp = sc.cp = 1;
	if (proj_finalize(&sc))
		return NAN;
	proj_shape_of(&sc, &x);
	proj_params_of(&sc, &x, sc.layers, 0, &P);
	if (active_b)
		*active_b = (P.p_total - P.p_mtp_all - P.p_idle) / 1e9;
	return (P.p_total - P.p_mtp_all) / 1e9;
}

cvc_status cvc_proj_params_of(const char *const *keys, const char *const *vals, size_t n,
			      double *total_b, double *active_b)
{
	cvc_proj_scenario sc;
	double t, a = NAN;

	*total_b = *active_b = NAN;
	cvc_proj_scenario_default(&sc);
	for (size_t i = 0; i < n; i++) {
		int f = keys[i] && vals[i] && vals[i][0] ? proj_field_find("model", keys[i]) : -1;

		if (f >= 0 && field_from_text(&sc, f, vals[i]))
			return CVC_ERR_FORMAT;
	}
	t = proj_params_total_b(&sc, &a);
	if (!isfinite(t))
		return CVC_ERR_FORMAT;
	*total_b = t, *active_b = a;
	return CVC_OK;
}
