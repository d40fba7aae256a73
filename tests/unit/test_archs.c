/*
 * test_archs.c - models by name (docs/SCENARIOS.md "Models by name"): the
 * shipped catalog of open models' published configurations
 * (projector/archs.yaml), names resolving in the spellings people write,
 * `model: NAME` filling the model section field by field, and
 * `model: {config: FILE}` reading a Hugging Face config.json: real ones
 * (tests/data/hf-config-*.json, sources in tests/data/hf-configs.md) read to
 * the catalog's values, malformed ones refused with the file and what was
 * expected.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

#define MAXS 64

struct got {
	int n;
	cvc_proj_scenario sc[MAXS];
	cvc_proj_result r[MAXS];
	char pat[MAXS][256], name[MAXS][96];
};

static int got_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct got *g = user;

	cr_assert_lt(g->n, MAXS);
	g->sc[g->n] = *sc;
	snprintf(g->pat[g->n], sizeof g->pat[g->n], "%s", sc->layer_pattern);
	snprintf(g->name[g->n], sizeof g->name[g->n], "%s", sc->model);
	g->sc[g->n].layer_pattern = g->pat[g->n];
	g->sc[g->n].model = g->name[g->n];
	g->sc[g->n].recompute_modules = "";
	g->r[g->n++] = *r;
	return 0;
}

/* Every scenario of text (as if read from file name), priced with the
 * spec-sheet defaults. */
static void run(const char *name, const char *text, struct got *g)
{
	memset(g, 0, sizeof *g);
	tu_study_run(name, text, CVC_PROJ_NO_MARGINAL, got_cb, g);
}

/* The message parsing text gives (it must fail with rc). */
static void parse_fails(const char *name, const char *text, cvc_status rc, const char *want)
{
	cvc_proj_study *st = NULL;

	cr_assert_eq(cvc_proj_study_parse(name, text, strlen(text), &st), rc, "%s",
		     cvc_proj_study_errmsg(st));
	cr_expect(strstr(cvc_proj_study_errmsg(st), want) != NULL, "want '%s' in: %s", want,
		  cvc_proj_study_errmsg(st));
	cvc_proj_study_free(st);
}

/*
 * Claim: every model of the shipped catalog is a scenario cvc prices: it
 * loads, each entry names its source and where it was read, and each one,
 * at seq 4096 on 64 GPUs (ep 8 where it has experts, 4 where 8 does not
 * divide them), is a valid layout
 * with a step time and memory.  A mistyped field, a pattern of another
 * length than its layers or MoE blocks without experts fails here.
 */
Test(archs, catalog_models_price)
{
	proj_archs *a = NULL;
	char err[256], text[512];
	size_t n;

	cr_assert_eq(proj_archs_load(&a, err, sizeof err), CVC_OK, "%s", err);
	n = proj_archs_count(a);
	cr_assert_geq(n, 40, "%zu models", n);
	for (size_t i = 0; i < n; i++) {
		const struct proj_arch *e = proj_archs_at(a, i);
		cvc_proj_scenario sc;
		struct got g;
		int moe;

		cr_expect(e->source[0] && e->read[0] && e->naliases > 0, "%s", e->name);
		cvc_proj_scenario_default(&sc);
		proj_arch_apply(e, &sc);
		/* ep 8, or the largest power of two under it that divides the
		 * experts (Qwen1.5-MoE's 60) */
		for (moe = sc.experts > 1 ? 8 : 1; moe > 1 && fmod(sc.experts, moe) != 0; moe /= 2)
			;
		snprintf(text, sizeof text,
			 "model: {arch: %s, seq: 4096}\ntraining: {global_batch: 512}\n"
			 "parallelism: {tp: 1, pp: 1, ep: %d}\nhardware: {gpu: B200, gpus: 64}\n",
			 e->name, moe);
		run("catalog.yaml", text, &g);
		cr_assert_eq(g.n, 1);
		cr_expect(g.r[0].valid, "%s: %s", e->name, g.r[0].reason);
		cr_expect(g.r[0].step_s > 0 && g.r[0].mem_gb > 0, "%s", e->name);
		cr_expect_str_eq(g.sc[0].model, e->name);
	}
	proj_archs_free(a);
}

/*
 * Claim: a model is found by the names people write it with: the Hugging
 * Face repository (with or without its organisation), the published
 * tables' spellings, any case, '_' or '-' or '.'; parenthesised remarks
 * are ignored; a size printed last ("DeepSeek V3 671B", "Qwen3 MoE 30B")
 * finds the model of that size, and no other ("GPT3-5B" is not
 * gpt3-175b, "DeepSeek V3 67B" not deepseek-v3); a name the catalog does
 * not have finds nothing.
 */
Test(archs, names_resolve)
{
	static const struct { const char *name, *want; } cases[] = {
		{"Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b"}, {"qwen3_235b_a22b", "qwen3-235b-a22b"},
		{"QWEN3-235B-A22B", "qwen3-235b-a22b"},      {"Qwen3-30B-A3B", "qwen3-30b-a3b"},
		{"deepseek-ai/DeepSeek-V3", "deepseek-v3"},   {"DeepSeek-V3", "deepseek-v3"},
		{"Nemotron-3-Nano", "nemotron-3-nano-30b-a3b"}, {"Llama3-70B", "llama3-70b"},
		{"Llama3.1-405B", "llama3.1-405b"},           {"meta-llama/Llama-3.1-405B", "llama3.1-405b"},
		{"openai/gpt-oss-120b", "gpt-oss-120b"},      {"GPT3-175B", "gpt3-175b"},
		{"Nemotron4-340B", "nemotron-4-340b"},        {"Kimi-K2-Instruct", "kimi-k2"},
		{"DeepSeek-V3 (MTP)", "deepseek-v3"},         {"DeepSeek-LLM-67B (dense)", NULL},
		{"Mixtral-8x22B", "mixtral-8x22b"},           {"GLM-4.5", "glm-4.5"},
		{"zai-org/GLM-4.5-Air", "glm-4.5-air"},       {"DBRX", "dbrx"},
		{"Llama-3.3-70B-Instruct", "llama3.3-70b"},   {"Qwen3-0.6B", "qwen3-0.6b"},
		{"DeepSeek-V2-Lite", "deepseek-v2-lite"},     {"DeepSeek-V2", "deepseek-v2"},
		/* as tables print them, the size last: taken when it is the size */
		{"DeepSeek V3 671B", "deepseek-v3"},          {"Qwen3 MoE 30B", "qwen3-30b-a3b"},
		{"Qwen3 MoE 235B", "qwen3-235b-a22b"},        {"GLM 4.5 Air 106B", "glm-4.5-air"},
		{"Kimi K2 1T", "kimi-k2"},                    {"DeepSeek V3 67B", NULL},
		{"GPT3-5B", NULL},                            {"Qwen3 3B", NULL},
		{"Llama3.1-405B-proxy-7L", NULL},             {"", NULL},
	};
	proj_archs *a = NULL;
	char err[256];

	cr_assert_eq(proj_archs_load(&a, err, sizeof err), CVC_OK, "%s", err);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct proj_arch *e = proj_archs_find(a, cases[i].name);

		if (cases[i].want)
			cr_expect(e && !strcmp(e->name, cases[i].want), "'%s' -> %s", cases[i].name,
				  e ? e->name : "nothing");
		else
			cr_expect_null(e, "'%s' -> %s", cases[i].name, e ? e->name : "");
	}
	/* no two models answer to one name: each name and alias finds its own */
	for (size_t i = 0; i < proj_archs_count(a); i++) {
		const struct proj_arch *e = proj_archs_at(a, i);

		cr_expect_eq(proj_archs_find(a, e->name), e, "%s", e->name);
		for (size_t j = 0; j < e->naliases; j++)
			cr_expect_eq(proj_archs_find(a, e->aliases[j]), e, "%s: alias %s", e->name,
				     e->aliases[j]);
	}
	proj_archs_free(a);
}

/*
 * Claim: `model: NAME` fills every field the configuration gives; the
 * section's other keys override it field by field whatever their order;
 * a list of names and mappings is a sweep.  Setup: Qwen3-235B-A22B (94
 * layers, head_dim 128, 128 experts of 1536, top 8: NVIDIA/Megatron-LM's
 * conf of it), then 48 layers and seq 8192 over it.
 */
Test(archs, model_by_name_fills_and_overrides)
{
	struct got g;

	run("n.yaml",
	    "model: [qwen3-235b-a22b, {layers: 48, arch: Qwen/Qwen3-235B-A22B, seq: 8192},\n"
	    "        {arch: deepseek-v3, name: mine}]\n"
	    "parallelism: {tp: 4, ep: 8}\nhardware: {gpu: H100-SXM, gpus: 64}\n", &g);
	cr_assert_eq(g.n, 3);
	cr_expect_str_eq(g.sc[0].model, "qwen3-235b-a22b");
	cr_expect(g.sc[0].layers == 94 && g.sc[0].hidden == 4096 && g.sc[0].heads == 64 &&
		  g.sc[0].kv_heads == 4 && g.sc[0].head_dim == 128 && g.sc[0].experts == 128 &&
		  g.sc[0].top_k == 8 && g.sc[0].moe_ffn == 1536 && g.sc[0].vocab == 151936 &&
		  !g.sc[0].tie_embeddings && g.sc[0].ffn_type == CVC_PROJ_FFN_SWIGLU,
		  "qwen3-235b-a22b read wrong");
	cr_expect(g.sc[0].seq == 2048, "the sequence is the scenario's: %g", g.sc[0].seq);
	cr_expect(g.sc[1].layers == 48 && g.sc[1].seq == 8192 && g.sc[1].hidden == 4096,
		  "%g layers, seq %g", g.sc[1].layers, g.sc[1].seq);
	cr_expect_str_eq(g.sc[2].model, "mine");
	cr_expect(g.sc[2].kv_lora_rank == 512 && g.sc[2].moe_first_dense == 3 &&
		  g.sc[2].mtp_layers == 1);
	parse_fails("u.yaml", "model: [llama3-8b, qwen9-1t]\n", CVC_ERR_FORMAT,
		    "'u.yaml': line 1, column 20: unknown model 'qwen9-1t'");
	parse_fails("b.yaml", "model: {arch: llama3-8b, config: c.json}\n", CVC_ERR_FORMAT,
		    "'b.yaml': line 1, column 26: give the model by arch or by config, not both");
}

/* The scenario `model: <model>` makes, finalized (n: the study's name). */
static void finalized(const char *model, cvc_proj_scenario *out, char *pat, size_t patlen)
{
	char text[512];
	struct got g;

	snprintf(text, sizeof text, "model: %s\nparallelism: {tp: 1}\n"
		 "hardware: {gpu: H100-SXM, gpus: 8}\n", model);
	run(CVC_SOURCE_DIR "/tests/data/study.yaml", text, &g);
	cr_assert_eq(g.n, 1);
	*out = g.sc[0];
	snprintf(pat, patlen, "%s", g.pat[0]);
	out->layer_pattern = pat;
	cr_assert_null(proj_finalize(out));
}

/*
 * Claim: a real config.json reads to the same model as the catalog's
 * entry for it, field by field (two readings of one configuration: the
 * catalog's values were transcribed from the sources it names, the
 * config.json is read by its keys).  Setup: DeepSeek-V3's (MLA ranks,
 * three dense first layers, a shared expert, MTP, topk_group), Nemotron-H
 * 8B's (the hybrid pattern, Mamba sizes, squared ReLU, attention_head_dim)
 * and gpt-oss-120b's (layer_types alternating sliding and full attention),
 * Qwen2-57B-A14B's (a shared expert; a sliding window use_sliding_window
 * turns off), Mistral-NeMo 12B's (a head width other than hidden/heads),
 * Gemma 3 1B's (sliding_window_pattern, gelu_pytorch_tanh, tied by
 * leaving the key out), phi-4's and DBRX's (its own key names, the sizes
 * nested in attn_config and ffn_config), as tests/data/hf-configs.md names
 * them; the path relative to the scenario file's folder.  Exact.
 */
Test(archs, config_json_reads_as_the_catalog)
{
	static const struct { const char *file, *arch; } cases[] = {
		{"hf-config-deepseek-v3.json", "deepseek-v3"},
		{"hf-config-nemotron-h-8b.json", "nemotron-h-8b"},
		{"hf-config-gpt-oss-120b.json", "gpt-oss-120b"},
		{"hf-config-qwen2-57b-a14b.json", "qwen2-57b-a14b"},
		{"hf-config-mistral-nemo-12b.json", "mistral-nemo-12b"},
		{"hf-config-gemma3-1b.json", "gemma3-1b"},
		{"hf-config-phi4.json", "phi4"},
		{"hf-config-dbrx.json", "dbrx"},
	};

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cvc_proj_scenario a, b;
		char m[256], pa[256], pb[256];

		snprintf(m, sizeof m, "{config: %s}", cases[i].file);
		finalized(m, &a, pa, sizeof pa);
		finalized(cases[i].arch, &b, pb, sizeof pb);
		for (size_t f = 0; f < proj_nfields; f++) {
			if (proj_fields[f].type == PF_STR)
				continue;
			cr_expect(proj_field_get(&a, (int)f) == proj_field_get(&b, (int)f),
				  "%s: %s %g, catalog %g", cases[i].file, proj_fields[f].key,
				  proj_field_get(&a, (int)f), proj_field_get(&b, (int)f));
		}
		cr_expect_str_eq(pa, pb, "%s: layer_pattern", cases[i].file);
	}
}

/* Writes text to a new file in dir and returns its path in buf. */
static const char *write_file(const char *dir, const char *name, const char *text, char *buf,
			      size_t len)
{
	FILE *f;

	snprintf(buf, len, "%s/%s", dir, name);
	cr_assert_not_null(f = fopen(buf, "w"));
	fputs(text, f);
	fclose(f);
	return buf;
}

/*
 * Claim: a config.json is untrusted input: one that is not JSON, lacks
 * the shape, gives a key the wrong type, names an activation or a layer
 * pattern cvc does not price, or is not there is refused with the
 * scenario file's position, the config's name and what was expected.
 */
Test(archs, config_json_errors)
{
	static const struct { const char *json, *want; } cases[] = {
		{"{\"hidden_size\": 4096,", "byte 21: expected a JSON object"},
		{"[1, 2]", "expected a JSON object (a config.json)"},
		{"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"vocab_size\": 10}",
		 "expected num_attention_heads|n_head"},
		{"{\"num_hidden_layers\": 2, \"hidden_size\": \"big\", \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10}", "hidden_size: expected a positive whole number"},
		{"{\"num_hidden_layers\": 2.5, \"hidden_size\": 64, \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10}", "num_hidden_layers: expected a positive whole number"},
		{"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10, \"hidden_act\": \"tanh\"}", "hidden_act: expected an activation"},
		{"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10, \"hybrid_override_pattern\": \"M?\"}",
		 "hybrid_override_pattern: expected M, *, - or E"},
		{"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10} trailing", "byte 88: expected the end of the file"},
		/* found by fuzz.hfconfig: a period past int was converted */
		{"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10, \"sliding_window\": 512, \"sliding_window_pattern\": 1e30}",
		 "sliding_window_pattern: expected a whole number"},
		{"{\"num_hidden_layers\": 2, \"hidden_size\": 64, \"num_attention_heads\": 4, "
		 "\"vocab_size\": 10, \"sliding_window\": 512, \"sliding_window_pattern\": \"6\"}",
		 "sliding_window_pattern: expected a positive whole number"},
	};
	char dir[] = "/tmp/cvc-archs-XXXXXX", path[512], yaml[1024], text[1200];

	cr_assert_not_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char want[2048];

		write_file(dir, "config.json", cases[i].json, path, sizeof path);
		snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
		snprintf(text, sizeof text, "model: {config: config.json}\n");
		snprintf(want, sizeof want, "'%s': line 1, column 17: '%s': %s", yaml, path,
			 cases[i].want);
		parse_fails(yaml, text, CVC_ERR_FORMAT, want);
		unlink(path);
	}
	/* no such file: the input's fault too */
	snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
	parse_fails(yaml, "model: {config: missing.json}\n", CVC_ERR_NOTFOUND, "missing.json");
	rmdir(dir);
}

/*
 * Claim: the catalog is public as a table (`cvc project --models`): one
 * row per model with its aliases, source and where it was read.
 */
Test(archs, catalog_as_csv)
{
	char *buf = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(cvc_proj_archs_write(f, err, sizeof err), CVC_OK, "%s", err);
	fclose(f);
	cr_expect(strncmp(buf, "name,aliases,source,read\n", 25) == 0);
	cr_expect(strstr(buf, "\n\"qwen3-235b-a22b\",\"Qwen/Qwen3-235B-A22B ") != NULL);
	free(buf);
}

/*
 * Claim: a config.json whose layers are of a kind cvc does not price is
 * refused by name, never priced as another kind (found on real configs:
 * Qwen3-Next's and Qwen3.5's gated DeltaNet layers, MiniMax's lightning
 * attention, DeepSeek-V3.2's sparse attention, Jamba's Mamba-1, Falcon-H1's
 * attention and Mamba side by side were priced as softmax attention or
 * dense MLA: +52% to +131% FLOPs at 32K tokens, or layers dropped).
 */
Test(archs, config_json_layers_cvc_does_not_price)
{
#define SHAPE "{\"num_hidden_layers\": 4, \"hidden_size\": 64, \"num_attention_heads\": 4, " \
	      "\"vocab_size\": 10, "
	static const struct { const char *json, *want; } cases[] = {
		{SHAPE "\"layer_types\": [\"linear_attention\", \"linear_attention\", "
		       "\"linear_attention\", \"full_attention\"]}",
		 "layer_types: 'linear_attention' layers (gated DeltaNet"},
		{SHAPE "\"full_attention_interval\": 4, \"linear_num_value_heads\": 32}",
		 "full_attention_interval: the 'linear_attention' layers"},
		{SHAPE "\"attn_type_list\": [0, 0, 0, 1]}", "attn_type_list: lightning"},
		{SHAPE "\"index_topk\": 2048}", "index_topk: DeepSeek Sparse Attention"},
		{SHAPE "\"attn_layer_period\": 8, \"attn_layer_offset\": 4}",
		 "attn_layer_period: Jamba's Mamba-1 layers"},
		{SHAPE "\"model_type\": \"falcon_h1\"}", "model_type: Falcon-H1's layers"},
		{SHAPE "\"layer_types\": [\"full_attention\", \"retention\", \"full_attention\", "
		       "\"full_attention\"]}",
		 "layer_types: expected full_attention, sliding_attention"},
		{SHAPE "\"moe_num_experts\": 8, \"moe_k\": 2, \"moe_layer_end_index\": 2}",
		 "moe_layer_end_index: expected the last layer"},
	};
#undef SHAPE
	char dir[] = "/tmp/cvc-archs-XXXXXX", path[512], yaml[1024];

	cr_assert_not_null(mkdtemp(dir));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		write_file(dir, "config.json", cases[i].json, path, sizeof path);
		snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
		parse_fails(yaml, "model: {config: config.json}\n", CVC_ERR_FORMAT, cases[i].want);
		unlink(path);
	}
	rmdir(dir);
}

/*
 * Claim: a config.json means what transformers makes of it: a key left out
 * takes its model type's default (Llama 4's and Phi-3.5-MoE's configs omit
 * tie_word_embeddings and hidden_act: untied and SiLU-gated, not cvc's
 * GPT-2 default of tied and plain GELU); the other names of the keys cvc
 * reads are read (ERNIE 4.5's moe_k, moe_num_shared_experts and
 * moe_layer_start_index; Granite 4.0's shared_intermediate_size, its
 * mamba/attention layer_types and mamba_n_heads; Qwen3.5's
 * mtp_num_hidden_layers).
 */
Test(archs, config_json_keys_as_transformers_reads_them)
{
	static const char llama4[] =
		"{\"model_type\": \"llama4_text\", \"num_hidden_layers\": 2, \"hidden_size\": 64, "
		"\"num_attention_heads\": 4, \"vocab_size\": 100, \"intermediate_size\": 128}";
	static const char ernie[] =
		"{\"model_type\": \"ernie4_5_moe\", \"num_hidden_layers\": 4, \"hidden_size\": 64, "
		"\"num_attention_heads\": 4, \"vocab_size\": 100, \"intermediate_size\": 256, "
		"\"tie_word_embeddings\": true, \"moe_num_experts\": 8, \"moe_k\": 2, "
		"\"moe_intermediate_size\": 32, \"moe_num_shared_experts\": 2, "
		"\"moe_layer_start_index\": 1, \"moe_layer_interval\": 1, "
		"\"moe_layer_end_index\": 3, \"mtp_num_hidden_layers\": 1}";
	static const char granite[] =
		"{\"model_type\": \"granitemoehybrid\", \"num_hidden_layers\": 4, "
		"\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
		"\"vocab_size\": 100, \"hidden_act\": \"silu\", \"num_local_experts\": 8, "
		"\"num_experts_per_tok\": 2, \"intermediate_size\": 32, "
		"\"shared_intermediate_size\": 64, \"layer_types\": [\"mamba\", \"mamba\", "
		"\"attention\", \"mamba\"], \"mamba_n_heads\": 4, \"mamba_d_head\": 32, "
		"\"mamba_d_state\": 16, \"mamba_n_groups\": 1, \"mamba_d_conv\": 4}";
	char dir[] = "/tmp/cvc-archs-XXXXXX", path[512], yaml[1024];
	struct got g;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
	write_file(dir, "llama4.json", llama4, path, sizeof path);
	write_file(dir, "ernie.json", ernie, path, sizeof path);
	write_file(dir, "granite.json", granite, path, sizeof path);
	run(yaml, "model: [{config: llama4.json}, {config: ernie.json}, {config: granite.json}]\n"
		  "parallelism: {tp: 1}\nhardware: {gpu: H100-SXM, gpus: 8}\n", &g);
	cr_assert_eq(g.n, 3);
	cr_expect(!g.sc[0].tie_embeddings && g.sc[0].ffn_type == CVC_PROJ_FFN_SWIGLU,
		  "llama4 without the keys: tie %d, ffn_type %d", g.sc[0].tie_embeddings,
		  g.sc[0].ffn_type);
	cr_expect(g.sc[1].top_k == 2 && g.sc[1].shared_ffn == 64 && g.sc[1].moe_first_dense == 1 &&
		  g.sc[1].moe_layer_freq == 1 && g.sc[1].mtp_layers == 1 && g.sc[1].tie_embeddings &&
		  g.sc[1].ffn_type == CVC_PROJ_FFN_SWIGLU,
		  "ernie: top_k %g shared %g first %g mtp %g", g.sc[1].top_k, g.sc[1].shared_ffn,
		  g.sc[1].moe_first_dense, g.sc[1].mtp_layers);
	cr_expect(g.sc[2].layers == 8 && g.sc[2].shared_ffn == 64 && g.sc[2].mamba_heads == 4 &&
		  g.sc[2].mamba_head_dim == 32,
		  "granite: layers %g shared %g mamba heads %g x %g", g.sc[2].layers,
		  g.sc[2].shared_ffn, g.sc[2].mamba_heads, g.sc[2].mamba_head_dim);
	cr_expect_str_eq(g.pat[2], "MEME*EME");
	for (const char *f = "llama4.json\0ernie.json\0granite.json\0"; *f; f += strlen(f) + 1) {
		snprintf(path, sizeof path, "%s/%s", dir, f);
		unlink(path);
	}
	rmdir(dir);
}
