/*
 * hfconfig.c - a Hugging Face config.json read as a model: `model: {config:
 * FILE}` in a scenario file (docs/SCENARIOS.md "Models by name").  The file
 * is untrusted input: capped in size and nesting, every key cvc reads
 * checked for its type, and a message naming the file and what was
 * expected when it is not what a config.json holds.  Keys that change
 * nothing cvc prices are ignored; layers of a kind cvc does not price
 * (linear attention, DeepSeek's sparse attention, Mamba-1, attention and
 * Mamba side by side) are refused by name (unpriced_layers()), never priced
 * as another kind.
 *
 * The keys are those of transformers' configuration classes for the model
 * types cvc knows (llama, mistral, mixtral, qwen2/3 and their MoE, gemma
 * 1-3, deepseek_v2/v3, gpt_oss, llama4, nemotron, nemotron_h): the shape
 * (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads,
 * head_dim, intermediate_size, vocab_size, tie_word_embeddings), MLA's
 * ranks, the experts (n_routed_experts / num_local_experts / num_experts,
 * num_experts_per_tok, moe_intermediate_size, the shared experts, the dense
 * first layers), multi-token prediction, the hybrid layer pattern and its
 * Mamba sizes, and local attention (sliding_window with layer_types or
 * sliding_window_pattern; attention_chunk_size).  A multimodal config's
 * text_config (or llm_config) is the model when it has the layers.  DBRX
 * (model_type dbrx) names its shape its own way, with the attention's and
 * the experts' sizes in attn_config and ffn_config: read under the common
 * names (dbrx_flat).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"
#include "proj_internal.h"

#define HF_MAX_BYTES (4u << 20)
#define HF_MAX_DEPTH 32

struct hf {
	const char *path;
	json_object *cfg, *root;
	proj_archs *pool;
	struct proj_arch *e;
	char *err;
	size_t errlen;
	int types_pattern;   /* the layer pattern came from layer_types */
};

static cvc_status bad(struct hf *h, const char *key, const char *what)
{
	snprintf(h->err, h->errlen, "'%s': %s: expected %s", h->path, key, what);
	return CVC_ERR_FORMAT;
}

/* A config whose layers cvc does not price: refused with what they are. */
static cvc_status unpriced(struct hf *h, const char *key, const char *what)
{
	snprintf(h->err, h->errlen, "'%s': %s: %s are not priced by cvc", h->path, key, what);
	return CVC_ERR_FORMAT;
}

/*
 * Model types whose transformers configuration class defaults to untied
 * embeddings and a SiLU-gated MLP (LlamaConfig and the classes built after
 * it: configuration_llama4.py Llama4TextConfig, configuration_phimoe.py
 * PhimoeConfig, ... tie_word_embeddings False, hidden_act "silu"): what a
 * config of theirs means when it leaves those keys out.  cvc's own default
 * (tied, plain GELU) is GPT-2's.
 */
static int llama_defaults(const char *type)
{
	static const char *const t[] = {"llama", "llama4", "llama4_text", "mistral", "mixtral",
					"qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi3",
					"phimoe", "olmoe", "deepseek_v2", "deepseek_v3", NULL};

	for (int i = 0; type && t[i]; i++)
		if (!strcmp(type, t[i]))
			return 1;
	return 0;
}

/* Types whose class defaults to a SiLU-gated MLP but ties its embeddings
 * (ERNIE 4.5: configuration_ernie4_5_moe.py hidden_act "silu",
 * tie_word_embeddings True). */
static int silu_default(const char *type)
{
	return llama_defaults(type) ||
	       (type && (!strcmp(type, "ernie4_5") || !strcmp(type, "ernie4_5_moe")));
}

/* cfg's key as a number: 1 when given, 0 when absent or null, -1 when of
 * another type. */
static int num(struct hf *h, const char *key, double *v)
{
	json_object *o;

	if (!json_object_object_get_ex(h->cfg, key, &o) || !o)
		return 0;
	if (!json_object_is_type(o, json_type_int) && !json_object_is_type(o, json_type_double))
		return -1;
	*v = json_object_get_double(o);
	return isfinite(*v) ? 1 : -1;
}

/* Sets a field from a number; positive whole numbers only unless zero_ok. */
static cvc_status put(struct hf *h, const char *field, const char *key, double v, int zero_ok)
{
	char s[64], why[200];

	if (!(v >= (zero_ok ? 0 : 1)) || v != floor(v) || v > 1e12)
		return bad(h, key, zero_ok ? "a whole number" : "a positive whole number");
	snprintf(s, sizeof s, "%.0f", v);
	return proj_arch_set(h->pool, h->e, field, s, why, sizeof why);
}

/* The first of keys that cfg gives, into the field; required: an error
 * when none is given. */
static cvc_status take(struct hf *h, const char *field, const char *keys, int required,
		       int zero_ok, double *out)
{
	char k[64];
	double v = 0;
	int got = 0;

	for (const char *p = keys; *p && !got;) {
		size_t n = strcspn(p, "|");

		snprintf(k, sizeof k, "%.*s", (int)n, p);
		if ((got = num(h, k, &v)) < 0)
			return bad(h, k, zero_ok ? "a whole number" : "a positive whole number");
		p += n + (p[n] ? 1 : 0);
	}
	if (!got) {
		if (required) {
			snprintf(h->err, h->errlen, "'%s': expected %s (a positive whole number)",
				 h->path, keys);
			return CVC_ERR_FORMAT;
		}
		return CVC_OK;
	}
	if (out)
		*out = v;
	return put(h, field, k, v, zero_ok);
}

static const char *str(struct hf *h, const char *key)
{
	json_object *o;

	if (!json_object_object_get_ex(h->cfg, key, &o) || !json_object_is_type(o, json_type_string))
		return NULL;
	return json_object_get_string(o);
}

/* The FFN's activation: hidden_act (or its siblings) and whether the model
 * type's MLP is gated (LLaMA-style gate_proj/up_proj) or not (GPT-2,
 * GPT-NeoX, Nemotron). */
static cvc_status ffn_type(struct hf *h)
{
	static const char *const plain[] = {"gpt2", "gpt_neox", "gptj", "opt", "gpt_bigcode",
					    "nemotron", "nemotron_h", "falcon", "bloom", NULL};
	const char *act = str(h, "hidden_activation"), *type = str(h, "model_type");
	const char *name = NULL;
	char why[200];
	int gated = 1;

	if (!act)
		act = str(h, "mlp_hidden_act");
	if (!act)
		act = str(h, "hidden_act");
	if (!act)
		act = str(h, "activation_function");
	if (!act && silu_default(type))
		return proj_arch_set(h->pool, h->e, "ffn_type", "swiglu", why, sizeof why);
	if (!act)
		return CVC_OK; /* cvc's default: gelu */
	for (int i = 0; type && plain[i]; i++)
		if (!strcmp(type, plain[i]))
			gated = 0;
	if (type && !strcmp(type, "gpt_oss"))
		/* GPT-OSS's experts gate with x sigmoid(1.702 x), quick GELU,
		 * whatever hidden_act says (transformers GptOssExperts: alpha
		 * 1.702; Megatron-Bridge's GPTOSSProvider: quick_gelu,
		 * gated_linear_unit): a GELU-gated unit, which Megatron-LM's
		 * FLOP count, gating only --swiglu, counts with two matrices */
		name = "geglu";
	else if (!strcmp(act, "relu2") || !strcmp(act, "squared_relu"))
		name = "relu2";
	else if (!strcmp(act, "silu") || !strcmp(act, "swish") || !strcmp(act, "swiglu"))
		name = gated ? "swiglu" : "gelu";
	else if (!strncmp(act, "gelu", 4))
		name = gated ? "geglu" : "gelu";
	else if (!strcmp(act, "relu"))
		name = gated ? "swiglu" : "gelu";
	else
		return bad(h, "hidden_act", "an activation cvc prices (silu, gelu*, relu, relu2)");
	return proj_arch_set(h->pool, h->e, "ffn_type", name, why, sizeof why);
}

/* The experts: their count, per token, width, shared experts and which
 * layers have them. */
static cvc_status experts(struct hf *h)
{
	double E = 0, w = 0, ns = 0, v;
	cvc_status rc;
	int got;

	if ((rc = take(h, "experts", "n_routed_experts|num_local_experts|num_experts|moe_num_experts",
		       0, 1, &E)))
		return rc;
	if (!(E > 1))
		return CVC_OK;
	if ((rc = take(h, "top_k", "num_experts_per_tok|experts_per_token|moe_top_k|moe_k", 1, 0,
		       NULL)) ||
	    (rc = take(h, "moe_ffn", "moe_intermediate_size", 0, 0, &w)))
		return rc;
	/* shared experts: DeepSeek's count of moe_intermediate_size-wide ones,
	 * or a width (Qwen2-MoE, Nemotron-H) */
	if ((got = num(h, "n_shared_experts", &ns)) == 0)
		got = num(h, "moe_num_shared_experts", &ns); /* ERNIE 4.5 */
	if (got < 0)
		return bad(h, "n_shared_experts", "a whole number");
	if (got && ns > 0 && (rc = put(h, "shared_ffn", "n_shared_experts", ns * w, 0)))
		return rc;
	/* Granite 4.0's shared_intermediate_size; ERNIE 4.5's first MoE layer
	 * and the step between them */
	if ((rc = take(h, "shared_ffn",
		       "shared_expert_intermediate_size|moe_shared_expert_intermediate_size|"
		       "shared_intermediate_size",
		       0, 1, NULL)) ||
	    (rc = take(h, "moe_first_dense", "first_k_dense_replace|moe_layer_start_index", 0, 1,
		       NULL)) ||
	    (rc = take(h, "moe_layer_freq", "moe_layer_freq|decoder_sparse_step|moe_layer_interval",
		       0, 0, NULL)))
		return rc;
	if ((rc = take(h, "moe_router_group_topk", "topk_group", 0, 1, NULL)) ||
	    (rc = take(h, "moe_latent", "moe_latent_size", 0, 0, NULL))) /* Nemotron 3 Super */
		return rc;
	/* ERNIE 4.5: MoE layers up to moe_layer_end_index; dense ones after
	 * the last MoE layer cvc has no field for */
	if ((got = num(h, "moe_layer_end_index", &v)) < 0)
		return bad(h, "moe_layer_end_index", "a whole number or null");
	if (got && v >= 0) {
		double L = 0;

		if (num(h, "num_hidden_layers", &L) > 0 && v < L - 1)
			return bad(h, "moe_layer_end_index", "the last layer or null (dense layers "
				   "after the MoE ones are not read)");
	}
	/* Llama 4: the experts and the one shared expert of intermediate_size,
	 * the dense layers' FFN of intermediate_size_mlp (Llama4TextMoe) */
	if (num(h, "intermediate_size_mlp", &v) > 0) {
		double ew = 0;

		if ((rc = take(h, "moe_ffn", "intermediate_size", 1, 0, &ew)) ||
		    (rc = put(h, "shared_ffn", "intermediate_size", ew, 0)) ||
		    (rc = put(h, "ffn", "intermediate_size_mlp", v, 0)))
			return rc;
	}
	/* Llama 4: an MoE layer every step-th, the last of each step */
	if ((got = num(h, "interleave_moe_layer_step", &v)) < 0)
		return bad(h, "interleave_moe_layer_step", "a positive whole number");
	if (got && v > 1 && ((rc = put(h, "moe_first_dense", "interleave_moe_layer_step", v - 1, 1)) ||
			     (rc = put(h, "moe_layer_freq", "interleave_moe_layer_step", v, 0))))
		return rc;
	{
		json_object *o;

		if (json_object_object_get_ex(h->cfg, "mlp_only_layers", &o) &&
		    json_object_is_type(o, json_type_array) && json_object_array_length(o) > 0)
			return bad(h, "mlp_only_layers", "an empty list (dense layers by list are not "
				   "read; write moe_first_dense and moe_layer_freq)");
	}
	return CVC_OK;
}

/* A list of layer types as one character per layer ("mamba", "attention",
 * "mlp", "moe": Nemotron-H's layers_block_type), or the pattern string. */
static cvc_status pattern(struct hf *h)
{
	json_object *o;
	const char *p = str(h, "hybrid_override_pattern");
	char why[200], buf[4097];

	if (p) {
		if (strlen(p) > 4096 || p[strspn(p, "M*-E")])
			return bad(h, "hybrid_override_pattern", "M, *, - or E for each layer");
		return proj_arch_set(h->pool, h->e, "layer_pattern", p, why, sizeof why);
	}
	if (!json_object_object_get_ex(h->cfg, "layers_block_type", &o) ||
	    !json_object_is_type(o, json_type_array))
		return CVC_OK;
	{
		size_t n = json_object_array_length(o);

		if (n > 4096)
			return bad(h, "layers_block_type", "at most 4096 layers");
		for (size_t i = 0; i < n; i++) {
			const char *t = json_object_get_string(json_object_array_get_idx(o, i));

			if (!t)
				return bad(h, "layers_block_type", "layer type names");
			buf[i] = !strcmp(t, "mamba") ? 'M' : !strcmp(t, "attention") ? '*'
				: !strcmp(t, "mlp") ? '-' : !strcmp(t, "moe") ? 'E' : 0;
			if (!buf[i])
				return bad(h, "layers_block_type", "mamba, attention, mlp or moe");
		}
		buf[n] = 0;
	}
	return proj_arch_set(h->pool, h->e, "layer_pattern", buf, why, sizeof why);
}

static cvc_status mamba(struct hf *h, double hidden)
{
	double heads = 0, pd = 64, expand = 0;
	cvc_status rc;

	if ((rc = take(h, "mamba_head_dim", "mamba_head_dim|mamba_d_head", 0, 0, &pd)) ||
	    (rc = take(h, "mamba_heads", "mamba_num_heads|mamba_n_heads", 0, 0, &heads)) ||
	    (rc = take(h, "mamba_state", "ssm_state_size|mamba_d_state", 0, 0, NULL)) ||
	    (rc = take(h, "mamba_groups", "n_groups|mamba_n_groups", 0, 0, NULL)) ||
	    (rc = take(h, "mamba_conv", "conv_kernel|mamba_d_conv", 0, 0, NULL)) ||
	    (rc = take(h, "mamba_chunk", "chunk_size|mamba_chunk_size", 0, 0, NULL)))
		return rc;
	/* Mamba-2 without mamba_num_heads: expand x hidden over the head width */
	if (!(heads > 0) && num(h, "expand", &expand) > 0 && expand > 0 &&
	    fmod(expand * hidden, pd) == 0)
		return put(h, "mamba_heads", "expand", expand * hidden / pd, 0);
	return CVC_OK;
}

/* The period p of layer types whose every p-th layer (1-based) is the
 * full-attention one: 0 when every layer is local, -1 when none is or the
 * list has no such period. */
static int local_period(json_object *types)
{
	size_t n = json_object_array_length(types);
	int nlocal = 0;

	for (size_t i = 0; i < n; i++) {
		const char *t = json_object_get_string(json_object_array_get_idx(types, i));

		nlocal += t && strstr(t, "sliding") != NULL;
	}
	if (nlocal == 0)
		return -1;
	if ((size_t)nlocal == n)
		return 0;
	for (size_t p = 2; p <= n; p++) {
		size_t i;

		for (i = 0; i < n; i++) {
			const char *t = json_object_get_string(json_object_array_get_idx(types, i));
			int local = t && strstr(t, "sliding") != NULL;

			if (local != ((i + 1) % p != 0))
				break;
		}
		if (i == n)
			return (int)p;
	}
	return -2;
}

static cvc_status local_attention(struct hf *h)
{
	json_object *o, *types;
	double w = 0, f, per = 0;
	cvc_status rc;
	int got, use = 1, p;
	const char *type = str(h, "model_type"), *per_key = "layer_types";
	char why[200];

	/* Llama 4: chunked attention on the rope layers, the NoPE ones global */
	if ((got = num(h, "attention_chunk_size", &w)) < 0)
		return bad(h, "attention_chunk_size", "a positive whole number");
	if (got && w > 0) {
		if ((rc = put(h, "window", "attention_chunk_size", w, 0)) ||
		    (rc = proj_arch_set(h->pool, h->e, "window_chunked", "true", why, sizeof why)))
			return rc;
		return num(h, "nope_layer_interval", &f) > 0 ? put(h, "window_skip_freq",
								    "nope_layer_interval", f, 1)
							  : put(h, "window_skip_freq", "llama4", 4, 1);
	}
	if (json_object_object_get_ex(h->cfg, "use_sliding_window", &o) &&
	    json_object_is_type(o, json_type_boolean))
		use = json_object_get_boolean(o);
	if ((got = num(h, "sliding_window", &w)) < 0)
		return bad(h, "sliding_window", "a positive whole number or null");
	if (!got || !use || !(w > 0))
		return CVC_OK;
	if (json_object_object_get_ex(h->cfg, "layer_types", &types) &&
	    json_object_is_type(types, json_type_array)) {
		if ((p = local_period(types)) == -1)
			return CVC_OK;
		if (p < 0)
			return bad(h, "layer_types", "full attention every n-th layer (window_skip_freq)");
		per = p;
	} else if ((got = num(h, "sliding_window_pattern", &f)) != 0) {
		if (got < 0)
			return bad(h, "sliding_window_pattern", "a positive whole number");
		per = f; /* Gemma 3: every per-th layer global; put() checks its range */
		per_key = "sliding_window_pattern";
	} else if (type && !strcmp(type, "gemma2")) {
		per = 2; /* transformers' Gemma2: local and global alternating */
	}
	if ((rc = put(h, "window", "sliding_window", w, 0)))
		return rc;
	return put(h, "window_skip_freq", per_key, per, 1);
}

/*
 * Layers of a kind cvc does not price, refused by name: priced as the
 * softmax attention or dense MLA cvc would take them for, they would be
 * wrong by their own kind's cost (Qwen3-Next's 36 gated DeltaNet layers of
 * 48: +131% FLOPs at 32K tokens; DeepSeek-V3.2's top-2048 sparse attention
 * priced dense: +99%).
 */
static cvc_status unpriced_layers(struct hf *h)
{
	json_object *o;
	double v;
	const char *type = str(h, "model_type");

	if (num(h, "index_topk", &v) > 0 && v > 0)
		return unpriced(h, "index_topk", "DeepSeek Sparse Attention's indexer and top-k "
			       "attention (index_topk null prices dense MLA, as the model's dense "
			       "warm-up ran)");
	if (json_object_object_get_ex(h->cfg, "attn_type_list", &o) &&
	    json_object_is_type(o, json_type_array))
		for (size_t i = 0; i < json_object_array_length(o); i++)
			if (json_object_get_int(json_object_array_get_idx(o, i)) == 0)
				return unpriced(h, "attn_type_list", "lightning (linear) attention "
					       "layers (type 0)");
	if (json_object_object_get_ex(h->cfg, "attn_layer_period", &o) ||
	    json_object_object_get_ex(h->cfg, "expert_layer_period", &o))
		return unpriced(h, "attn_layer_period", "Jamba's Mamba-1 layers (cvc prices "
			       "Mamba-2: hybrid_override_pattern prices the blocks so)");
	if (type && !strcmp(type, "falcon_h1"))
		return unpriced(h, "model_type", "Falcon-H1's layers, attention and Mamba-2 side "
			       "by side in one layer,");
	if (num(h, "full_attention_interval", &v) > 0 || num(h, "linear_num_value_heads", &v) > 0)
		return unpriced(h, "full_attention_interval", "the 'linear_attention' layers "
			       "(gated DeltaNet) between the full-attention ones");
	if (json_object_object_get_ex(h->cfg, "layer_types", &o) &&
	    json_object_is_type(o, json_type_array))
		for (size_t i = 0; i < json_object_array_length(o); i++) {
			const char *t = json_object_get_string(json_object_array_get_idx(o, i));

			if (t && strstr(t, "linear"))
				return unpriced(h, "layer_types", "'linear_attention' layers (gated "
					       "DeltaNet, Qwen3-Next and Qwen3.5)");
			if (!t || (!strstr(t, "attention") && strcmp(t, "mamba")))
				return bad(h, "layer_types", "full_attention, sliding_attention, "
					   "chunked_attention, attention or mamba for each layer");
		}
	return CVC_OK;
}

/*
 * layer_types naming Mamba layers (Granite 4.0's granitemoehybrid: each
 * layer a mixer, "mamba" or "attention", then its FFN): the pattern of
 * blocks cvc prices, a mixer and an FFN (E with experts, - without) a
 * layer, so twice the layers.
 */
static cvc_status types_pattern(struct hf *h)
{
	json_object *o;
	char why[200], buf[4097];
	double E = 0, layers = 0;
	size_t n;
	int mamba = 0;

	if (str(h, "hybrid_override_pattern") ||
	    json_object_object_get_ex(h->cfg, "layers_block_type", &o) ||
	    !json_object_object_get_ex(h->cfg, "layer_types", &o) ||
	    !json_object_is_type(o, json_type_array))
		return CVC_OK;
	n = json_object_array_length(o);
	for (size_t i = 0; i < n; i++)
		mamba += !strcmp(json_object_get_string(json_object_array_get_idx(o, i)), "mamba");
	if (!mamba)
		return CVC_OK;
	if (n > 2048)
		return bad(h, "layer_types", "at most 2048 layers");
	if (num(h, "num_hidden_layers", &layers) > 0 && layers != (double)n)
		return bad(h, "layer_types", "one type for each of num_hidden_layers");
	(void)(num(h, "num_local_experts", &E) > 0 || num(h, "num_experts", &E) > 0);
	for (size_t i = 0; i < n; i++) {
		const char *t = json_object_get_string(json_object_array_get_idx(o, i));

		buf[2 * i] = !strcmp(t, "mamba") ? 'M' : '*';
		buf[2 * i + 1] = E > 1 ? 'E' : '-';
	}
	buf[2 * n] = 0;
	h->types_pattern = 1;
	if (put(h, "layers", "layer_types", 2.0 * n, 0))
		return CVC_ERR_FORMAT;
	return proj_arch_set(h->pool, h->e, "layer_pattern", buf, why, sizeof why);
}

/* The model's own keys, cfg being the text model's object. */
static cvc_status read_model(struct hf *h)
{
	json_object *o;
	double hidden = 0, heads = 0, v;
	cvc_status rc;
	int got;
	char why[200];

	if ((rc = unpriced_layers(h)) ||
	    (rc = take(h, "layers", "num_hidden_layers|n_layer|num_layers", 1, 0, NULL)) ||
	    (rc = take(h, "hidden", "hidden_size|n_embd|d_model", 1, 0, &hidden)) ||
	    (rc = take(h, "heads", "num_attention_heads|n_head", 1, 0, &heads)) ||
	    (rc = take(h, "vocab", "vocab_size", 1, 0, NULL)) ||
	    (rc = take(h, "kv_heads", "num_key_value_heads", 0, 0, NULL)) ||
	    (rc = take(h, "ffn", "intermediate_size|n_inner|ffn_dim", 0, 0, NULL)))
		return rc;
	/* MLA: the query/key heads' part without rope is the head width */
	if ((got = num(h, "kv_lora_rank", &v)) < 0)
		return bad(h, "kv_lora_rank", "a positive whole number");
	if (got && v > 0) {
		if ((rc = put(h, "kv_lora_rank", "kv_lora_rank", v, 0)) ||
		    (rc = take(h, "q_lora_rank", "q_lora_rank", 0, 1, NULL)) ||
		    (rc = take(h, "head_dim", "qk_nope_head_dim", 1, 0, NULL)) ||
		    (rc = take(h, "qk_rope_dim", "qk_rope_head_dim", 0, 1, NULL)) ||
		    (rc = take(h, "v_head_dim", "v_head_dim", 0, 0, NULL)))
			return rc;
	} else if ((rc = take(h, "head_dim", "head_dim|attention_head_dim|kv_channels", 0, 0,
			      NULL))) {
		return rc;
	}
	if (json_object_object_get_ex(h->cfg, "tie_word_embeddings", &o) ||
	    json_object_object_get_ex(h->root, "tie_word_embeddings", &o)) {
		if (!json_object_is_type(o, json_type_boolean))
			return bad(h, "tie_word_embeddings", "true or false");
		if ((rc = proj_arch_set(h->pool, h->e, "tie_embeddings",
					json_object_get_boolean(o) ? "true" : "false", why, sizeof why)))
			return rc;
	} else if (llama_defaults(str(h, "model_type")) &&
		   (rc = proj_arch_set(h->pool, h->e, "tie_embeddings", "false", why, sizeof why))) {
		return rc;
	}
	if ((rc = ffn_type(h)) || (rc = experts(h)) ||
	    (rc = take(h, "mtp_layers", "num_nextn_predict_layers|mtp_num_layers|mtp_num_hidden_layers",
		       0, 1, NULL)) ||
	    (rc = pattern(h)) || (rc = types_pattern(h)))
		return rc;
	if (str(h, "hybrid_override_pattern") || h->types_pattern ||
	    json_object_object_get_ex(h->cfg, "layers_block_type", &o))
		if ((rc = mamba(h, hidden)))
			return rc;
	return local_attention(h);
}

/* Copies obj's key (if there) under name into flat, shared not copied. */
static void flat_put(json_object *flat, const char *name, json_object *obj, const char *key)
{
	json_object *o;

	if (obj && json_object_is_type(obj, json_type_object) &&
	    json_object_object_get_ex(obj, key, &o))
		json_object_object_add(flat, name, json_object_get(o));
}

/*
 * DBRX's configuration under the common keys (transformers' DbrxConfig,
 * DbrxAttentionConfig, DbrxFFNConfig): n_layers, d_model, n_heads,
 * attn_config.kv_n_heads, ffn_config.ffn_hidden_size (each expert's width),
 * moe_num_experts, moe_top_k and ffn_act_fn.name.  NULL when out of memory.
 */
static json_object *dbrx_flat(json_object *root)
{
	static const char *const top[][2] = {
		{"num_hidden_layers", "n_layers"}, {"hidden_size", "d_model"},
		{"num_attention_heads", "n_heads"}, {"vocab_size", "vocab_size"},
		{"tie_word_embeddings", "tie_word_embeddings"}, {"model_type", "model_type"},
		{"_name_or_path", "_name_or_path"},
	};
	json_object *flat = json_object_new_object(), *attn = NULL, *ffn = NULL, *act = NULL;

	if (!flat)
		return NULL;
	for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
		flat_put(flat, top[i][0], root, top[i][1]);
	json_object_object_get_ex(root, "attn_config", &attn);
	json_object_object_get_ex(root, "ffn_config", &ffn);
	flat_put(flat, "num_key_value_heads", attn, "kv_n_heads");
	flat_put(flat, "intermediate_size", ffn, "ffn_hidden_size");
	flat_put(flat, "num_local_experts", ffn, "moe_num_experts");
	flat_put(flat, "num_experts_per_tok", ffn, "moe_top_k");
	if (ffn && json_object_is_type(ffn, json_type_object) &&
	    json_object_object_get_ex(ffn, "ffn_act_fn", &act))
		flat_put(flat, "hidden_act", act, "name");
	return flat;
}

/* The model's name: the config's _name_or_path (Hugging Face writes it when
 * it saves one), else the folder of a file called config.json (a
 * repository's layout, "Qwen3-8B/config.json"), else the file's name
 * without ".json".  buf holds a name made from the path. */
static const char *config_name(struct hf *h, const char *path, char *buf, size_t len)
{
	const char *np = str(h, "_name_or_path"), *base = strrchr(path, '/');
	size_t n;

	if (np && np[0])
		return np;
	base = base ? base + 1 : path;
	if (!strcmp(base, "config.json") && base > path + 1) {
		const char *start = base - 1;

		while (start > path && start[-1] != '/')
			start--;
		n = (size_t)(base - 1 - start);
		if (n && !(n == 1 && start[0] == '.')) {
			snprintf(buf, len, "%.*s", (int)n, start);
			return buf;
		}
	}
	n = strlen(base);
	if (n > 5 && !strcmp(base + n - 5, ".json"))
		n -= 5;
	snprintf(buf, len, "%.*s", (int)n, base);
	return buf;
}

cvc_status proj_hf_config_load(const char *path, proj_archs *pool, struct proj_arch *e, char *err,
			       size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	json_tokener *tok = NULL;
	json_object *root = NULL, *sub, *flat = NULL;
	struct hf h = {path, NULL, NULL, pool, e, err, errlen, 0};
	cvc_status rc;
	char name[200];

	memset(e, 0, sizeof *e);
	if ((rc = cvc_file_read(path, HF_MAX_BYTES, &buf, &len, err, errlen)))
		return rc;
	if (!(tok = json_tokener_new_ex(HF_MAX_DEPTH))) {
		rc = CVC_ERR_NOMEM;
		goto out;
	}
	root = json_tokener_parse_ex(tok, buf, (int)len);
	if (!root || json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error je = json_tokener_get_error(tok);

		/* json-c says "continue" for a file that ends inside the object */
		snprintf(err, errlen, "'%s': byte %zu: expected a JSON object (%s)", path,
			 json_tokener_get_parse_end(tok),
			 je == json_tokener_continue ? "the file ends inside it"
						     : json_tokener_error_desc(je));
		rc = CVC_ERR_FORMAT;
		goto out;
	}
	for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
		if (!strchr(" \t\r\n", buf[i])) {
			snprintf(err, errlen, "'%s': byte %zu: expected the end of the file", path, i);
			rc = CVC_ERR_FORMAT;
			goto out;
		}
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "'%s': expected a JSON object (a config.json)", path);
		rc = CVC_ERR_FORMAT;
		goto out;
	}
	h.root = h.cfg = root;
	/* a multimodal model's text model */
	if ((json_object_object_get_ex(root, "text_config", &sub) ||
	     json_object_object_get_ex(root, "llm_config", &sub)) &&
	    json_object_is_type(sub, json_type_object) &&
	    json_object_object_get_ex(sub, "num_hidden_layers", NULL))
		h.cfg = sub;
	if (str(&h, "model_type") && !strcmp(str(&h, "model_type"), "dbrx")) {
		if (!(flat = dbrx_flat(root))) {
			rc = CVC_ERR_NOMEM;
			goto out;
		}
		h.root = h.cfg = flat;
	}
	if (!(e->name = proj_archs_keep(pool, config_name(&h, path, name, sizeof name))) ||
	    !(e->source = proj_archs_keep(pool, path)) || !(e->read = e->source)) {
		rc = CVC_ERR_NOMEM;
		goto out;
	}
	rc = read_model(&h);
out:
	if (flat)
		json_object_put(flat);
	if (root)
		json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	free(buf);
	return rc;
}
