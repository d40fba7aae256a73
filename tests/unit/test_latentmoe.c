/*
 * test_latentmoe.c - LatentMoE (Nemotron 3 Super and Ultra): the routed
 * experts take in and give back moe_latent, between a projection from the
 * hidden size after the router and one back after the combine; the router
 * and the shared experts keep the hidden size (Megatron-Core's
 * moe/moe_layer.py fc1_latent_proj / fc2_latent_proj, mlp.py's
 * use_latent_size for routed experts only; docs/MODELS.md "MoE layers").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "projector/proj_internal.h"
#include "testutil.h"

/* One MoE model at hidden 2048 (Qwen3-30B-A3B's layer, 48 layers, 128
 * experts of 768, top 8), EP 8 on one HGX H100 board, the all-to-all
 * dispatcher, without or with a latent of 512; micro-batches of 4 so that
 * the GPU, not the host's launches, sets the pace. */
static const char fmt[] =
	"model: {arch: qwen3-30b-a3b, seq: 4096%s}\n"
	"training: {global_batch: 64, micro_batch: 4, dtype: bf16, recompute: none}\n"
	"parallelism: {tp: 1, pp: 1, ep: 8, etp: 1}\n"
	"comm: {ep_dispatcher: alltoall}\n"
	"hardware: {gpu: H100-SXM, gpus: 8}\n";

/*
 * Claim: the weights are the latent's: each layer's experts lose
 * E x 3 x f x (h - l) parameters (SwiGLU's three matrices) and gain the
 * two projections' 2 h l, exactly; what a token runs loses the same over
 * its top_k experts.  The exchange moves latent rows: the all-to-all's
 * seconds at large messages scale as l / h (within the latency's share).
 */
Test(latentmoe, weights_and_exchange_at_the_latent_width)
{
	struct cvc_proj_result r[2];
	double L = 48, E = 128, k = 8, f = 768, h = 2048, l = 512, d_tot, d_act, ep;

	tu_proj_pair(fmt, "", ", moe_latent: 512", r);
	d_tot = L * (E * 3 * f * (h - l) - 2 * h * l) / 1e9;
	d_act = L * (k * 3 * f * (h - l) - 2 * h * l) / 1e9;
	cr_log_info("params %.4fB -> %.4fB (expected -%.4fB), active %.4fB -> %.4fB (-%.4fB)",
		    r[0].params_b, r[1].params_b, d_tot, r[0].active_params_b, r[1].active_params_b,
		    d_act);
	cr_expect_float_eq(r[0].params_b - r[1].params_b, d_tot, 1e-9 * r[0].params_b);
	cr_expect_float_eq(r[0].active_params_b - r[1].active_params_b, d_act,
			   2e-3 * r[0].active_params_b);
	ep = r[1].comm_type_s[CVC_PROJ_COMM_EP] / r[0].comm_type_s[CVC_PROJ_COMM_EP];
	cr_log_info("ep exchange %.4f s -> %.4f s: x%.3f (l / h = %.3f)",
		    r[0].comm_type_s[CVC_PROJ_COMM_EP], r[1].comm_type_s[CVC_PROJ_COMM_EP], ep, l / h);
	cr_expect(ep > l / h && ep < 1.2 * l / h, "exchange x%.3f, latent share %.3f", ep, l / h);
	cr_expect_lt(r[1].compute_s, r[0].compute_s);
}

/*
 * Claim: the catalog's Nemotron 3 Super and Ultra count the parameters
 * their names publish, 120B with 12B active and 550B with 55B (within 3%;
 * active within 5% plus the embedding, which authors count or not), which
 * only the latent width gives: at the hidden size their 512 experts hold
 * 458B and 2.1T.
 */
Test(latentmoe, nemotron_3_counts_its_published_parameters)
{
	static const struct { const char *arch; double total, active, h; } pub[] = {
		{"nemotron-3-super-120b-a12b", 120, 12, 4096},
		{"nemotron-3-ultra-550b-a55b", 550, 55, 8192},
	};

	for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++) {
		char yaml[1024];
		struct cvc_proj_result r;
		double emb = 131072 * pub[i].h / 1e9;

		snprintf(yaml, sizeof yaml,
			 "model: {arch: %s, seq: 8192}\ntraining: {global_batch: 512}\n"
			 "parallelism: {tp: 1, pp: 1, ep: 64, etp: 1}\n"
			 "hardware: {gpu: GB300, gpus: 64}\n", pub[i].arch);
		cr_assert_eq(tu_proj_first(yaml, NULL, &r), 1, "%s", yaml);
		cr_log_info("%s: %.2fB total (%.0fB), %.2fB active (%.0fB)", pub[i].arch,
			    r.params_b, pub[i].total, r.active_params_b, pub[i].active);
		cr_expect_lt(fabs(r.params_b / pub[i].total - 1), 0.03, "%s", pub[i].arch);
		cr_expect_lt(fabs(r.active_params_b - pub[i].active), 0.05 * pub[i].active + emb,
			     "%s", pub[i].arch);
	}
}

/*
 * Megatron-Bridge's hybrid FLOP count of a LatentMoE hybrid
 * (training/utils/flop_utils.py @0494433b, hybrid_flops), per sequence,
 * worked here by hand: attention 4 s h p (h + h g / a + s / 2), Mamba
 * 2 s h (2 d + 2 G N + H) + 7 s d N + 2 s d h with d = 2 h, MoE
 * 4 s l f k + 4 s h l + 4 s h f_shared (squared ReLU: no gate), each of
 * the mtp depths one more attention and MoE block (its pattern "*E") and
 * the logits 2 s h V once more; all x 3.
 */
static double bridge_count(double M, double A, double E, double mtp, double h, double a,
			   double g, double H, double f, double fs, double k, double l)
{
	double s = 8192, V = 131072, d = 2 * h, p = a * 128 / h;
	double attn = 4 * s * h * p * (h + h * g / a + s / 2);
	double mamba = 2 * s * h * (2 * d + 2 * 8 * 128 + H) + 7 * s * d * 128 + 2 * s * d * h;
	double moe = 4 * s * l * f * k + 4 * s * h * l + 4 * s * h * fs;

	return 3 * ((A + mtp) * attn + M * mamba + (E + mtp) * moe + 2 * s * h * V * (1 + mtp));
}

/* The count and the depths of the first scenario, taken while the study
 * (which owns its strings: the layer pattern) is alive. */
static int count_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	double *out = user;

	(void)r;
	if (out[2]++ == 0) {
		out[0] = proj_flops_per_seq(PROJ_FLOPS_MEGATRON_CAUSAL, sc);
		out[1] = sc->mtp_layers;
	}
	return 0;
}

/*
 * Claim: the catalog's Nemotron 3 Super and Ultra train with the two
 * multi-token-prediction depths NVIDIA's recipes run (Megatron-Bridge's
 * Nemotron3SuperProvider and nemotron_3_ultra_pretrain_config:
 * mtp_num_layers 2), and cvc's megatron convention counts them as
 * Megatron-Bridge does, with the routed experts at the latent width: the
 * count agrees with the hand-worked one above, and it reads back the
 * TFLOP/s Megatron-Bridge's performance summary prints beside its
 * tokens/s (tests/data/megatron-bridge-nemotron3-offshared.csv: Super on
 * 64 GB300, 815 TFLOP/s at 9623 tokens/s, 84.69 GFLOP a token; Ultra on
 * 256 GB300, 1348 at 3744, 360.04) within 1%.  Before, the count took the
 * routed experts at the hidden width and no prediction depth: 160.6 and
 * 724.6 GFLOP a token, and 75.4 and 335.6 with the latent alone.
 */
Test(latentmoe, megatron_count_reads_back_the_published_tflops)
{
	static const struct {
		const char *arch, *gpu;
		double gpus, M, A, E, h, a, H, f, fs, l, tflops, tok;
	} m[] = {
		{"nemotron-3-super-120b-a12b", "GB300", 64, 40, 8, 40, 4096, 32, 128, 2688, 5376,
		 1024, 815, 9623},
		{"nemotron-3-ultra-550b-a55b", "GB300", 256, 48, 12, 48, 8192, 64, 256, 5120,
		 10240, 2048, 1348, 3744},
	};

	for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
		char yaml[1024];
		double c[3] = {0, 0, 0}, got, want, printed = m[i].tflops * 1e12 / m[i].tok;

		snprintf(yaml, sizeof yaml,
			 "model: {arch: %s, seq: 8192}\ntraining: {global_batch: 512}\n"
			 "parallelism: {tp: 1, pp: 1, ep: 64, etp: 1}\n"
			 "hardware: {gpu: %s, gpus: %g}\n", m[i].arch, m[i].gpu, m[i].gpus);
		tu_study_run("t.yaml", yaml, CVC_PROJ_NO_MARGINAL, count_cb, c);
		cr_assert_eq(c[2], 1, "%s", yaml);
		cr_expect_eq(c[1], 2, "%s: %g depths", m[i].arch, c[1]);
		got = c[0];
		want = bridge_count(m[i].M, m[i].A, m[i].E, 2, m[i].h, m[i].a, 2, m[i].H, m[i].f,
				    m[i].fs, 22, m[i].l);
		cr_log_info("%s: %.4f GFLOP a token (by hand %.4f; printed %.2f)", m[i].arch,
			    got / 8192 / 1e9, want / 8192 / 1e9, printed / 1e9);
		cr_expect_float_eq(got, want, 1e-9 * want, "%s", m[i].arch);
		cr_expect_lt(fabs(got / 8192 / printed - 1), 0.01, "%s", m[i].arch);
	}
}

/* Claim: a config.json's moe_latent_size is read as moe_latent (and null,
 * as Nemotron-H's configs without LatentMoE write it, as none). */
Test(latentmoe, config_json_key)
{
	static const char cfg[] =
		"{\"model_type\": \"nemotron_h\", \"hidden_size\": 4096, \"num_hidden_layers\": 4,"
		" \"num_attention_heads\": 32, \"num_key_value_heads\": 2, \"head_dim\": 128,"
		" \"intermediate_size\": 2688, \"vocab_size\": 131072, \"mlp_hidden_act\": \"relu2\","
		" \"tie_word_embeddings\": false, \"n_routed_experts\": 512,"
		" \"num_experts_per_tok\": 22, \"moe_intermediate_size\": 2688,"
		" \"moe_shared_expert_intermediate_size\": 5376, \"moe_latent_size\": %s,"
		" \"hybrid_override_pattern\": \"M*ME\", \"mamba_num_heads\": 128,"
		" \"mamba_head_dim\": 64, \"ssm_state_size\": 128, \"n_groups\": 8}";
	const char *lat[] = {"1024", "null"};
	double want[] = {1024, 0};

	for (int i = 0; i < 2; i++) {
		char text[2048], yaml[1024], name[64];
		const char *path;
		cvc_proj_scenario sc;
		struct cvc_proj_result r;

		snprintf(name, sizeof name, "latent-%d.json", i);
		path = tu_path(tu_tmpdir(), name);
		snprintf(text, sizeof text, cfg, lat[i]);
		cr_assert_eq(tu_write(path, text, strlen(text)), 0);
		snprintf(yaml, sizeof yaml,
			 "model: {config: '%s', seq: 4096}\ntraining: {global_batch: 8}\n"
			 "parallelism: {ep: 8}\nhardware: {gpu: H100-SXM, gpus: 8}\n", path);
		cr_assert_eq(tu_proj_first(yaml, &sc, &r), 1, "%s", yaml);
		cr_expect_eq(sc.moe_latent, want[i], "%s: moe_latent %g", lat[i], sc.moe_latent);
	}
}
