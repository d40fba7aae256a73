/*
 * coldoc.c - what each column of the projector's CSV and JSON means: its
 * unit and definition, keyed by the names the writer's own tables give
 * (fields.c for the scenario, output.c for the results), walked in the
 * writer's order by `cvc project --columns` and docs/COLUMNS.md.  A column
 * of a communication type is written once with <t> (tp pp dp fsdp ep cp
 * xc); a 90% interval's ends X_lo and X_hi are X's entry.  A writer column
 * without an entry fails unit.columns.
 */
#include <stdio.h>
#include <string.h>

#include "proj_internal.h"

struct coldoc {
	const char *name, *unit, *def;
};

static const struct coldoc docs[] = {
	{"study", "text", "the study's name (its file's `name:`)"},
	{"index", "count", "the scenario's position in the study's expansion, from 0"},
	/* model */
	{"name", "text", "model name (`model:`; a catalog name fills the shape)"},
	{"layers", "count", "transformer layers (dense and MoE together)"},
	{"hidden", "count", "hidden size d_model"},
	{"heads", "count", "attention heads"},
	{"kv_heads", "count", "key/value heads (GQA/MQA; 0 = heads)"},
	{"head_dim", "count", "dimension per head (0 = hidden / heads)"},
	{"q_lora_rank", "count", "MLA: query compression rank (0 = none)"},
	{"kv_lora_rank", "count", "MLA: key/value compression rank (0 = no MLA)"},
	{"qk_rope_dim", "count", "MLA: rotary part of each query/key head"},
	{"v_head_dim", "count", "MLA: value head dimension"},
	{"ffn", "count", "dense MLP width (0 = 4 hidden, or 8/3 hidden rounded for swiglu)"},
	{"ffn_type", "text", "MLP activation: gelu, swiglu, geglu, relu2"},
	{"tie_embeddings", "0/1", "1: the output head shares the embedding's weights"},
	{"vocab", "count", "vocabulary size"},
	{"seq", "tokens", "sequence length"},
	{"experts", "count", "routed experts per MoE layer (1 = dense)"},
	{"top_k", "count", "experts each token is routed to"},
	{"moe_ffn", "count", "each routed expert's MLP width (0 = ffn)"},
	{"shared_ffn", "count", "shared experts' total MLP width, run on every token (0 = none)"},
	{"moe_latent", "count", "LatentMoE: the width the routed experts take in and give back (0 = the hidden size)"},
	{"moe_first_dense", "count", "leading dense layers before the first MoE layer"},
	{"moe_layer_freq", "count", "every n-th layer after them is MoE"},
	{"mtp_layers", "count", "multi-token-prediction modules"},
	{"layer_pattern", "text", "hybrid layer pattern (M Mamba-2, * attention, - MLP, E MoE)"},
	{"mamba_heads", "count", "Mamba-2 heads"},
	{"mamba_head_dim", "count", "Mamba-2 head dimension"},
	{"mamba_state", "count", "Mamba-2 state size"},
	{"mamba_groups", "count", "Mamba-2 groups"},
	{"mamba_conv", "count", "Mamba-2 convolution width"},
	{"mamba_chunk", "tokens", "Mamba-2 SSD chunk length"},
	{"window", "tokens", "local attention window (0 = global)"},
	{"window_skip_freq", "count", "every n-th layer keeps global attention"},
	{"window_chunked", "0/1", "1: chunked local attention, 0: sliding window"},
	{"moe_imbalance", "x", "load of the busiest expert over the mean (1 = balanced)"},
	/* training */
	{"global_batch", "sequences", "sequences per optimizer step"},
	{"micro_batch", "sequences", "sequences per micro-batch"},
	{"dtype", "text", "compute precision: bf16, fp16, fp8, fp32, nvfp4, mxfp4"},
	{"recompute", "text", "activation recomputation: none, selective, full"},
	{"recompute_modules", "text", "Megatron-Core's --recompute-modules"},
	{"optimizer", "text", "adam or sgd"},
	{"attention", "text", "attention kernel: flash, unfused, cudnn, fa1, fa2, fa4"},
	{"framework", "text", "megatron, pytorch or torchtitan (bucket sizes, overlaps, recompute)"},
	{"fp8_recipe", "text", "fp8 scaling: delayed, current, mxfp8, blockwise"},
	{"fp8_attention", "0/1", "1: attention in fp8 too"},
	{"dropout", "0/1", "1: dropout kernels priced"},
	{"zero", "stage", "ZeRO stage: 1 optimizer states, 2 + gradients, 3 + weights (FSDP)"},
	{"shard_group", "GPUs", "hybrid sharding: GPUs a ZeRO-3 shard spans (0 = all of dp)"},
	{"moe_router_fusion", "0/1", "1: Transformer Engine's fused router"},
	{"moe_permute_fusion", "0/1", "1: fused token permutation"},
	{"compile", "0/1", "framework torchtitan: 1 torch.compile over each block, 0 eager (each op a kernel)"},
	{"cuda_graphs", "0/1/2", "1: the layers' kernels launched from CUDA graphs (no launch gaps, "
				 "no host work per launch; a dropless MoE layer's routed experts "
				 "outside them); 2: the whole forward and backward of the "
				 "micro-batches in one graph (full_iteration: no gap, host work or "
				 "host sync in it; the optimizer step outside)"},
	{"bf16_layers_first", "layers", "with fp8/nvfp4/mxfp4: first layers kept in bf16"},
	{"bf16_layers_last", "layers", "with fp8/nvfp4/mxfp4: last layers kept in bf16"},
	{"moe_token_drop", "0/1", "1: MoE token drop padded to capacity (static shapes: no host "
				  "sync per layer, experts CUDA-graphable)"},
	{"grad_reduce_fp32", "0/1", "1: data-parallel gradients kept and reduced in fp32 (4 B), 0: "
				    "in the weights' 16 bits (auto: fp32 weights or torchtitan)"},
	{"fp8_param_gather", "0/1", "1: with fp8, the layers' weights kept only in fp8 (no 16-bit "
				    "copy) and gathered by the distributed optimizer in fp8"},
	{"optimizer_moments", "text", "the optimizer's moments: fp32 (4 B each) or bf16 (2 B)"},
	{"cpu_offload_layers", "layers", "the first layers whose activations wait in host memory "
					 "between their forward and backward (pp 1; 0: none)"},
	{"offload_modules", "text", "the submodules whose inputs every layer sends to host memory "
				    "between its forward and backward (Megatron-Core's "
				    "--offload-modules; empty: none)"},
	{"fused_grouped_mlp", "0/1", "1: the routed experts' MLP as Transformer Engine's fused op "
				     "(CuTe DSL) runs it: one grouped launch per GEMM, the "
				     "activation and its quantization in the GEMMs' epilogues "
				     "(Blackwell, mxfp8 or nvfp4)"},
	/* parallelism */
	{"tp", "GPUs", "tensor-parallel width"},
	{"pp", "stages", "pipeline-parallel stages"},
	{"vpp", "count", "virtual pipeline stages per GPU (interleaving)"},
	{"dp", "replicas", "data-parallel replicas (gpus / (tp pp cp))"},
	{"cp", "GPUs", "context-parallel width"},
	{"ep", "GPUs", "expert-parallel width"},
	{"etp", "GPUs", "expert tensor-parallel width"},
	{"sp", "0/1", "1: sequence parallelism with tp"},
	{"first_stage_layers", "layers", "layers of the first pipeline stage (0 = even split)"},
	{"last_stage_layers", "layers", "layers of the last pipeline stage (0 = even split)"},
	{"tp_row", "GPUs", "3D tensor parallelism: row dimension"},
	{"tp_col", "GPUs", "3D tensor parallelism: column dimension"},
	{"tp_depth", "GPUs", "3D tensor parallelism: depth dimension"},
	{"pp_schedule", "text", "pipeline schedule: 1f1b or dualpipe"},
	{"pp_layout", "text", "Megatron-Core's --pipeline-model-parallel-layout"},
	/* hardware */
	{"gpu", "text", "GPU or system of the catalog (models/hw/catalog.csv)"},
	{"gpus", "GPUs", "GPUs of the job"},
	{"nodes", "nodes", "nodes (0 = gpus / gpus_per_node)"},
	{"gpus_per_node", "GPUs", "GPUs per node"},
	{"nvlink_domain", "GPUs", "GPUs one NVLink domain joins (0 = a node)"},
	{"host_launch_us", "us", "the host's time per kernel launch (auto: measured 45.4; 0: no host "
				 "wait)"},
	{"scale_compute", "x", "future hardware: peak FLOP/s over the GPU's"},
	{"scale_hbm_bw", "x", "future hardware: HBM bandwidth over the GPU's"},
	{"scale_hbm_cap", "x", "future hardware: HBM capacity over the GPU's"},
	{"scale_intra_bw", "x", "future hardware: NVLink bandwidth over the GPU's"},
	{"scale_inter_bw", "x", "future hardware: network bandwidth over the GPU's"},
	/* communication */
	{"dp_overlap", "0/1", "1: gradient reduction overlaps the backward pass"},
	{"bucket_mb", "MB", "gradient bucket size (auto: the framework's own)"},
	{"tp_overlap", "0/1", "1: TP communication overlaps its GEMMs"},
	{"tp_overlap_ag", "0/1", "TP overlap of the all-gathers (-1 = tp_overlap)"},
	{"tp_overlap_rs", "0/1", "TP overlap of the reduce-scatters (-1 = tp_overlap)"},
	{"ep_overlap", "0/1", "1: expert-parallel exchanges overlap compute"},
	{"ep_dispatcher", "text", "MoE token dispatcher: alltoall, flex, allgather, deepep, hybridep"},
	{"ep_dispatch_fp8", "0/1", "1: tokens dispatched in fp8"},
	{"ep_sms", "SMs", "SMs the expert-parallel kernels hold (auto: the library's)"},
	{"moe_router_group_topk", "count", "node-limited routing: groups a token may reach"},
	{"local_sgd_h", "steps", "local SGD / DiLoCo: steps between synchronisations (1 = every)"},
	{"outer_overlap", "0/1", "1: the outer exchange streamed under the next steps"},
	{"clusters", "count", "clusters the job spans"},
	{"inter_cluster_gbps", "Gb/s", "link between each pair of clusters (aggregate)"},
	{"contention", "fraction", "slowdown of compute that overlaps communication"},
	/* cost */
	{"train_tokens", "tokens", "tokens to train for (days, GPU hours, cost)"},
	{"usd_per_gpu_hour", "USD", "price of one GPU hour"},
	{"gpu_power_w", "W", "power per GPU (0 = the catalog's TDP)"},
	{"pue", "x", "data centre power usage effectiveness"},
	/* results */
	{"valid", "0/1", "1: the layout is possible (else reason says why and metrics are empty)"},
	{"reason", "text", "why the layout is impossible; empty when valid"},
	{"fits", "0/1", "1: peak memory per GPU fits in its HBM"},
	{"step_s", "s", "one optimizer step: compute + exposed communication + pipeline bubble"},
	{"compute_s", "s", "compute on the critical path (contention and kernel gaps in)"},
	{"bubble_s", "s", "pipeline fill and drain, idle"},
	{"comm_s", "s", "all communication, hidden under compute or not"},
	{"hidden_s", "s", "communication under compute"},
	{"exposed_s", "s", "communication on the critical path (nothing hides it)"},
	{"comm_<t>_s", "s", "communication of type <t> (tp, pp, dp, fsdp, ep, cp, xc: "
			  "cross-cluster)"},
	{"hidden_<t>_s", "s", "communication of type <t> under compute"},
	{"exposed_<t>_s", "s", "communication of type <t> on the critical path"},
	{"contention_s", "s", "compute slowdown from overlapped communication (in compute_s)"},
	{"gaps_s", "s", "idle between back-to-back kernels (in compute_s)"},
	{"host_s", "s", "the GPU waiting for a host that launches slower than it runs (in "
			"compute_s)"},
	{"comm_share", "fraction of the step", "comm_s / step_s: communication, hidden or not, "
						"as a part of the step (above 1 where kinds run at once "
						"on their own links, pipeline transfers beside "
						"tensor-parallel collectives)"},
	{"exposed_share", "fraction of the step", "exposed_s / step_s"},
	{"comm_to_compute", "ratio", "comm_s / compute_s: above 1 no overlap hides it all"},
	{"mem_gb", "GB", "peak memory per GPU (GB = 1e9 bytes)"},
	{"mem_params_gb", "GB", "of it: weights, gradients, optimizer states"},
	{"mem_act_gb", "GB", "of it: activations of the micro-batches in flight"},
	{"mem_buf_gb", "GB", "of it: buffers (fp32 logits)"},
	{"hbm_gb", "GB", "usable HBM per GPU (scale_hbm_cap applied)"},
	{"params_b", "billions", "the model's parameters in billions, as published totals count them "
			  "(embedding, untied output layer, every expert; multi-token-prediction "
			  "modules left out)"},
	{"active_params_b", "billions", "of params_b, what one token runs: the routed experts it is not "
				 "sent to (experts - top_k per MoE layer) left out"},
	{"model_flops", "FLOP", "per step, without recomputation"},
	{"hw_flops", "FLOP", "per step, as executed (with recomputation)"},
	{"mfu", "fraction", "model_flops / (step_s gpus bf16-or-dtype peak)"},
	{"hfu", "fraction", "hw_flops / (step_s gpus peak)"},
	{"tokens_per_s", "tokens/s", "global_batch seq / step_s"},
	{"tokens_per_s_per_gpu", "tokens/s", "tokens_per_s / gpus"},
	{"train_days", "days", "train_tokens / tokens_per_s"},
	{"gpu_hours", "GPU hours", "gpus x the training time"},
	{"energy_mwh", "MWh", "gpus x power x time x pue"},
	{"cost_usd", "USD", "gpu_hours x usd_per_gpu_hour"},
	{"half_tokens_per_s", "tokens/s", "the same model's best at half the GPUs (empty: none)"},
	{"marginal_tokens_per_gpu", "tokens/s", "(tokens_per_s - half_tokens_per_s) / (gpus / 2)"},
	{"sigma", "fraction", "relative standard error of step_s (log scale)"},
	{"gain_compute", "x", "step_s / step_s with 2x peak FLOP/s"},
	{"gain_hbm_bw", "x", "step_s / step_s with 2x HBM bandwidth"},
	{"gain_hbm_cap", "x", "step_s / step_s with 2x HBM capacity"},
	{"gain_intra_bw", "x", "step_s / step_s with 2x NVLink bandwidth"},
	{"gain_inter_bw", "x", "step_s / step_s with 2x network bandwidth"},
	{"loss_penalty_pct", "%", "local SGD: the loss law's penalty of syncing every H steps"},
	{"token_factor", "x", "local SGD: tokens needed for the same loss over train_tokens"},
	{"eff_tokens_per_s", "tokens/s", "tokens_per_s / token_factor"},
	{"days_to_loss", "days", "train_days x token_factor"},
	{"offload_s", "s", "the GPU waiting for activation copies to and from the host that outlast "
			   "the layers they run beside (in compute_s)"},
	{"mem_offload_gb", "GB", "activations held in host memory (cpu_offload_layers, "
				 "offload_modules; not in mem_gb)"},
	{"warnings", "text", "what was priced past or without measurements; '; ' between items"},
};

static const struct coldoc *find(const char *name)
{
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
		if (strcmp(docs[i].name, name) == 0)
			return &docs[i];
	return NULL;
}

cvc_status cvc_proj_column_doc(const char *name, const char **unit, char *def, size_t len)
{
	char key[96], stem[96];
	const struct coldoc *d = find(name);
	size_t n = strlen(name);
	int end = 0; /* 1 lower end, 2 upper end of a 90% interval */

	if (!d && n > 3 && n < sizeof stem &&
	    (strcmp(name + n - 3, "_lo") == 0 || strcmp(name + n - 3, "_hi") == 0)) {
		end = name[n - 2] == 'l' ? 1 : 2;
		snprintf(stem, sizeof stem, "%.*s", (int)(n - 3), name);
		name = stem;
		d = find(name);
	}
	/* a communication type: its pattern's entry */
	for (int k = 0; !d && k < CVC_PROJ_COMM_N; k++) {
		const char *t = cvc_proj_comm_name(k), *at = strstr(name, t);
		size_t tl = strlen(t);

		if (at && at > name && at[-1] == '_' && at[tl] == '_' &&
		    (size_t)snprintf(key, sizeof key, "%.*s<t>%s", (int)(at - name), name,
				     at + tl) < sizeof key)
			d = find(key);
	}
	if (!d)
		return CVC_ERR_NOTFOUND;
	*unit = d->unit;
	if (end)
		snprintf(def, len, "%s end of the 90%% interval of %s", end == 1 ? "lower" : "upper",
			 name);
	else
		snprintf(def, len, "%s", d->def);
	return CVC_OK;
}
