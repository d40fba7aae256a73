/*
 * test_recompute.c - what recomputation runs again (core attention, fused
 * or not), and the recompute validate gives a row that names none: its
 * launcher's where cvc read it, else its framework's default.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

/* Llama 2 13B on 16 H100 in Megatron-Core, fused attention (the default
 * backend), under recompute rc. */
static void llama13b(const char *rc, cvc_proj_scenario *sc, cvc_proj_result *r)
{
	char text[1024];

	snprintf(text, sizeof text,
		 "model: {layers: 40, hidden: 5120, heads: 40, ffn: 13824, ffn_type: swiglu,"
		 " vocab: 32000, seq: 4096}\n"
		 "parallelism: {tp: 2, pp: 1}\n"
		 "hardware: {gpu: H100-SXM, gpus: 16, host_launch_us: 0}\n"
		 "training: {global_batch: 64, micro_batch: 1, recompute: %s}\n", rc);
	cr_assert_eq(tu_proj_first(text, sc, r), 1);
	cr_assert(r->valid, "%s", r->reason);
}

/*
 * Claim: Megatron-Core's selective recompute of core attention runs the
 * fused kernel's forward again (checkpoint_core_attention), so it costs
 * what that forward costs: the hardware FLOPs grow by exactly the core
 * attention's 4 s^2 h per layer and sequence (non-causal, as MFU counts),
 * the model FLOPs and the memory stay (a fused kernel keeps Q, K, V and
 * its log-sum-exp either way), and the step is longer.
 */
Test(recompute, core_attention_runs_again_under_a_fused_kernel)
{
	cvc_proj_scenario sc;
	cvc_proj_result sel, none;
	double core = 64.0 * 40 * 4 * 4096.0 * 4096 * 5120;

	llama13b("selective", &sc, &sel);
	llama13b("none", &sc, &none);
	cr_expect_float_eq(sel.model_flops, none.model_flops, 1e-12 * none.model_flops);
	cr_expect_float_eq(sel.hw_flops - none.hw_flops, core, 1e-9 * core, "%g more, expected %g",
			   sel.hw_flops - none.hw_flops, core);
	cr_expect_float_eq(sel.mem_gb, none.mem_gb, 1e-12 * none.mem_gb);
	cr_expect_gt(sel.step_s, none.step_s * 1.01, "selective %g s, none %g s", sel.step_s,
		     none.step_s);
}

/*
 * Claim: recompute_modules apply under selective recompute only, as in
 * Megatron-Core (--recompute-modules needs --recompute-granularity
 * selective); named with another recompute they change nothing and the
 * projection warns.
 */
Test(recompute, modules_apply_under_selective_only)
{
	cvc_proj_scenario sc;
	cvc_proj_result none, mods, sel;

	llama13b("none", &sc, &none);
	llama13b("none, recompute_modules: mlp", &sc, &mods);
	llama13b("selective, recompute_modules: mlp", &sc, &sel);
	cr_expect_float_eq(mods.step_s, none.step_s, 1e-12 * none.step_s);
	cr_expect(strstr(mods.warnings, "recompute_modules: not applied"), "%s", mods.warnings);
	cr_expect(!strstr(none.warnings, "recompute_modules") &&
			  !strstr(sel.warnings, "recompute_modules"),
		  "%s | %s", none.warnings, sel.warnings);
	cr_expect_gt(sel.step_s, none.step_s * 1.01);
}

/*
 * Claim: a row that names no recompute takes its launcher's where cvc has
 * read it, else its framework's default, and says which: dgxc-benchmarking
 * ran Nemotron-4 340B with selective (core attention) through v25.03 and
 * with none from v25.04 (rows a, b); a Megatron-LM row gets Megatron-Core's
 * none (row c); NeMo AutoModel's benchmark configuration for Qwen3-30B-A3B
 * checkpoints every block (row e; a row that says none keeps it, row f),
 * and its default is none (row g: a model without an entry); a row of
 * another PyTorch stack keeps the scenario default, none (row d).
 * The 340B row that recomputes is the slower one, and so is AutoModel's
 * fully recomputed row against the same row without.
 */
Test(recompute, validate_takes_the_launchers_else_the_frameworks)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,dp,ep,vpp,zero_fsdp,micro_batch,global_batch,gpus,"
		"gpu,dtype,recompute,tokens_per_s_per_gpu,source\n"
		"Nemotron4-340B,,,,4096,8,8,4,,12,,1,64,256,H100-SXM,bf16,,219,NVIDIA/dgxc-benchmarking "
		"nemotron/README_340b.md (releases v25.01.1 v25.02 v25.03) row-a\n"
		"Nemotron4-340B,,,,4096,8,8,4,,12,,1,64,256,H100-SXM,bf16,,219,NVIDIA/dgxc-benchmarking "
		"nemotron/README.md (release v25.05) row-b\n"
		"Llama2-13B,,,,4096,2,1,8,,,,1,64,16,H100-SXM,bf16,,3000,NVIDIA/Megatron-LM README row-c\n"
		"Llama2-13B,,,,4096,1,1,16,,,,1,64,16,H100-SXM,bf16,,3000,mosaicml/llm-foundry README "
		"row-d\n"
		"Qwen3 MoE 30B,,,,4096,1,1,8,8,,FSDP2 (8),4,512,8,H100-SXM,bf16,,12040,NVIDIA-NeMo/"
		"Automodel performance summary row-e\n"
		"Qwen3 MoE 30B,,,,4096,1,1,8,8,,FSDP2 (8),4,512,8,H100-SXM,bf16,none,12040,NeMo "
		"AutoModel row-f\n"
		"GPT-OSS 20B,,,,4096,1,1,8,8,,FSDP2 (8),2,256,8,H100-SXM,bf16,,13058,NVIDIA-NeMo/"
		"Automodel performance summary row-g\n";
	static const struct { const char *row, *said; } want[] = {
		{"row-a", "recompute=selective (core attention) (the launcher's: NVIDIA/dgxc-"
			  "benchmarking nemotron/nemotron4-340b-synth.yaml @8f5cbb37"},
		{"row-b", "recompute=none (Megatron-Core's default: TransformerConfig."
			  "recompute_granularity = None)"},
		{"row-c", "recompute=none (Megatron-Core's default"},
		{"row-d", "recompute=none (default)"},
		{"row-e", "recompute=full (every decoder block) (the launcher's: NVIDIA-NeMo/"
			  "Automodel examples/benchmark/configs/qwen3_moe_30b_te_deepep.yaml"},
		{"row-f", "!recompute="},
		{"row-g", "recompute=none (NeMo AutoModel's default"},
	};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char line[8192];
	double pred[7];

	cr_expect_eq(v.all.expressible, 7, "%d of 7 projected", v.all.expressible);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const char *w = want[i].said;

		cr_assert(tu_line_with(out, want[i].row, line, sizeof line));
		cr_expect(w[0] == '!' ? !strstr(line, w + 1) : !!strstr(line, w),
			  "%s: want '%s' in %s", want[i].row, w, line);
		pred[i] = tu_csv_num(line, 19); /* predicted_tokens_per_s_per_gpu */
	}
	cr_expect(pred[0] > 0 && pred[0] < pred[1], "selective %g, none %g tokens/s", pred[0],
		  pred[1]);
	cr_expect(pred[4] > 0 && pred[4] < pred[5] * 0.9, "full %g, none %g tokens/s", pred[4],
		  pred[5]);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: a row whose recompute_modules cell names modules and whose
 * recompute cell is empty ran selective recompute of those modules, said,
 * before any default (Megatron-Core's none would leave the modules out):
 * the row recomputing its MLPs is the slower.
 */
Test(recompute, a_modules_cell_is_selective)
{
	static const char text[] =
		"model,layers,hidden,heads,seq,tp,pp,dp,micro_batch,global_batch,gpus,gpu,dtype,"
		"recompute_modules,tokens_per_s_per_gpu,source\n"
		"Llama2-13B,,,,4096,2,1,8,1,64,16,H100-SXM,bf16,mlp,3000,NVIDIA/Megatron-LM row-m\n"
		"Llama2-13B,,,,4096,2,1,8,1,64,16,H100-SXM,bf16,,3000,NVIDIA/Megatron-LM row-n\n";
	cvc_proj_validation v;
	char *out = tu_validate_text(text, NULL, &v, CVC_OK);
	char m[8192], n[8192];

	cr_expect_eq(v.all.expressible, 2, "%d of 2 projected", v.all.expressible);
	cr_assert(tu_line_with(out, "row-m", m, sizeof m));
	cr_assert(tu_line_with(out, "row-n", n, sizeof n));
	cr_expect(strstr(m, "recompute=selective (the recompute_modules cell)"), "%s", m);
	cr_expect(strstr(n, "recompute=none (Megatron-Core's default"), "%s", n);
	/* predicted_tokens_per_s_per_gpu follows the 16 columns read */
	cr_expect_lt(tu_csv_num(m, 16), tu_csv_num(n, 16) * 0.99, "%s | %s", m, n);
	free(out);
	cvc_proj_validation_release(&v);
}
