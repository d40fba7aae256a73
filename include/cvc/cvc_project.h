/*
 * cvc_project.h - the projector: scenario files (YAML) describing training
 * runs that may not exist yet, expanded into a cross product of scenarios,
 * each decomposed into the operators of one training step, priced through
 * the operator models (cvc_model.h), overlapped, and summarised.
 *
 * Flow: cvc_proj_study_parse() -> cvc_proj_study_run(callback per scenario).
 * Results are streamed: a study of 10^7 scenarios never holds more than one
 * result at a time.  A cvc_proj_study is immutable after parsing; running it
 * is thread safe as long as each thread passes its own callback state.
 * Times inside the projector are seconds (double): a step is 1e-3..1e3 s and
 * the results are ratios, so the int64-ns rule of the trace side does not
 * buy anything here; names carry the unit (_s, _gb, _usd).
 */
#ifndef CVC_PROJECT_H
#define CVC_PROJECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cvc.h"

struct cvc_db;
struct cvc_hw_catalog;

/*
 * The models a projection prices with: the hardware catalog and, per GPU
 * (and future-hardware scale factors), a cvc_modelset built from the
 * database's fitted models (db NULL: the shipped defaults).  Modelsets are
 * built on first use and cached, so a ctx is NOT thread safe: one per
 * thread.
 */
typedef struct cvc_proj_ctx cvc_proj_ctx;

/* db may be NULL (borrowed; must outlive ctx).  On failure *out is still
 * set when it could be made (read cvc_proj_ctx_errmsg()). */
CVC_API cvc_status cvc_proj_ctx_new(struct cvc_db *db, cvc_proj_ctx **out);
/* Accepts NULL. */
CVC_API void cvc_proj_ctx_free(cvc_proj_ctx *ctx);
/* Intervals, warnings and gains on (the default) or off (faster). */
CVC_API void cvc_proj_ctx_set_intervals(cvc_proj_ctx *ctx, int on);
CVC_API int cvc_proj_ctx_intervals(const cvc_proj_ctx *ctx);
/* Price with fits the quality gate keeps out too (cvc_modelset_new_ex). */
CVC_API void cvc_proj_ctx_set_force(cvc_proj_ctx *ctx, int on);
/* Never NULL; "" when no failure. */
CVC_API const char *cvc_proj_ctx_errmsg(const cvc_proj_ctx *ctx);
/*
 * Where the figures used for gpu come from (one line per operator kind,
 * from cvc_model_origin()), written into buf.  Returns CVC_ERR_NOTFOUND
 * when gpu is not in the catalog.
 */
CVC_API cvc_status cvc_proj_ctx_origin(cvc_proj_ctx *ctx, const char *gpu, int dtype,
				       char *buf, size_t len);
/* The i-th GPU the run priced (as the scenarios name it), in the order they
 * were first priced; NULL past the last.  The provenance's bound holds: a
 * run that names more GPUs lists the first of them. */
CVC_API const char *cvc_proj_ctx_gpu(const cvc_proj_ctx *ctx, size_t i);

/* ---- enums (stable values: they appear in CSV output as names) ---------- */

/* The FFN's activation: gelu (two matrices), swiglu (SiLU-gated: gate, up,
 * down), geglu (GELU-gated, three matrices: Gemma, Grok-1), relu2 (squared
 * ReLU, two matrices: Nemotron-4, Nemotron-H) */
enum cvc_proj_ffn {
	CVC_PROJ_FFN_GELU = 0, CVC_PROJ_FFN_SWIGLU = 1, CVC_PROJ_FFN_GEGLU = 2,
	CVC_PROJ_FFN_RELU2 = 3
};
/* MoE token dispatch (Megatron-Core's --moe-token-dispatcher-type and
 * --moe-flex-dispatcher-backend): alltoall, NCCL all-to-all with one copy
 * per routed expert; flex, Megatron-Core's flex dispatcher on its default
 * backend, DeepEP (priced as deepep); allgather, every token all-gathered
 * over the EP group and the outputs reduce-scattered back; deepep and
 * hybridep, their kernels: one copy per rank a token reaches and, across
 * NVLink domains, one per remote domain forwarded over NVLink there
 * (docs/MODELS.md "Expert-parallel dispatchers") */
enum cvc_proj_dispatcher {
	CVC_PROJ_DISPATCH_ALLTOALL = 0, CVC_PROJ_DISPATCH_FLEX = 1, CVC_PROJ_DISPATCH_ALLGATHER = 2,
	CVC_PROJ_DISPATCH_DEEPEP = 3, CVC_PROJ_DISPATCH_HYBRIDEP = 4
};
/* Pipeline schedule: 1F1B (interleaved with vpp > 1), or DeepSeek's
 * DualPipe (bidirectional; every steady-state forward chunk paired with a
 * backward chunk; two copies of the stage's parameters) */
enum cvc_proj_pp_schedule { CVC_PROJ_PP_1F1B = 0, CVC_PROJ_PP_DUALPIPE = 1 };
/* fp8, nvfp4 and mxfp4 run the transformer layers' GEMMs in that format
 * (the router, attention, logits and activations stay 16-bit); nvfp4:
 * E2M1 with an E4M3 scale per 16 elements and a per-tensor fp32 scale
 * (Transformer Engine's NVFP4BlockScaling); mxfp4: E2M1 with an E8M0
 * scale per 32 (OCP Microscaling). */
enum cvc_proj_dtype {
	CVC_PROJ_BF16 = 0, CVC_PROJ_FP16 = 1, CVC_PROJ_FP8 = 2, CVC_PROJ_FP32 = 3,
	CVC_PROJ_NVFP4 = 4, CVC_PROJ_MXFP4 = 5, CVC_PROJ_NDTYPE
};
enum cvc_proj_recompute {
	CVC_PROJ_RECOMP_NONE = 0, CVC_PROJ_RECOMP_SELECTIVE = 1, CVC_PROJ_RECOMP_FULL = 2
};
enum cvc_proj_optim { CVC_PROJ_ADAM = 0, CVC_PROJ_SGD = 1 };
/* flash: the framework's fused attention kernel (Transformer Engine:
 * cuDNN on Hopper and later, FlashAttention-2 on Ampere; PyTorch SDPA:
 * FlashAttention-2, cuDNN on Blackwell); cudnn, fa2, fa4: that library;
 * fa1: FlashAttention-1 (flash-attn 1.x: llm-foundry's attn_impl flash
 * before its 0.6.0);
 * unfused: QK^T and AV batched GEMMs with a materialised softmax/dropout
 * (Megatron-LM before 2022). */
enum cvc_proj_attn {
	CVC_PROJ_ATTN_FLASH = 0, CVC_PROJ_ATTN_UNFUSED = 1, CVC_PROJ_ATTN_CUDNN = 2,
	CVC_PROJ_ATTN_FA2 = 3, CVC_PROJ_ATTN_FA4 = 4, CVC_PROJ_ATTN_FA1 = 5
};
/* megatron: Megatron-Core / NeMo with Transformer Engine (fused kernels:
 * vocab-parallel cross-entropy, norms and casts fused into GEMM
 * neighbours); pytorch: eager PyTorch (FSDP, DDP; llm-foundry): each op
 * its own kernel; torchtitan: PyTorch as torchtitan runs it (FSDP2, its
 * own activation checkpointing policies; docs/SCENARIOS.md). */
enum cvc_proj_framework {
	CVC_PROJ_FW_MEGATRON = 0, CVC_PROJ_FW_PYTORCH = 1, CVC_PROJ_FW_TORCHTITAN = 2
};
/* FP8 scaling recipes of Transformer Engine: delayed (per-tensor scale from
 * the amax history), current (per-tensor scale from this tensor's amax:
 * one more read of it), mxfp8 (32-element blocks, Blackwell), blockwise
 * (Float8BlockScaling: 1x128 blocks for activations and gradients,
 * 128x128 for weights, fp32 scales; DeepSeek-V3's recipe). */
enum cvc_proj_fp8_recipe {
	CVC_PROJ_FP8_DELAYED = 0, CVC_PROJ_FP8_CURRENT = 1, CVC_PROJ_FP8_MXFP8 = 2,
	CVC_PROJ_FP8_BLOCKWISE = 3
};

/* Communication types reported separately (hidden and exposed each). */
enum cvc_proj_comm {
	CVC_PROJ_COMM_TP = 0,     /* tensor-parallel all-reduce or RS+AG (SP) */
	CVC_PROJ_COMM_PP = 1,     /* pipeline send/recv */
	CVC_PROJ_COMM_DP = 2,     /* data-parallel grad all-reduce / ZeRO RS+AG */
	CVC_PROJ_COMM_FSDP = 3,   /* ZeRO-3 / FSDP per-layer parameter all-gathers */
	CVC_PROJ_COMM_EP = 4,     /* MoE all-to-all */
	CVC_PROJ_COMM_CP = 5,     /* context-parallel KV exchange */
	CVC_PROJ_COMM_XC = 6,     /* inter-cluster sync (multi-cluster / local SGD) */
	CVC_PROJ_COMM_N
};

/* "tp", "pp", ...; NULL when out of range. */
CVC_API const char *cvc_proj_comm_name(int kind);

/*
 * One concrete scenario.  Every numeric field is a double so that the
 * `where:` expression language and the expansion see one type; integral
 * fields hold integral values.  Strings are borrowed from the study (or the
 * caller) and outlive the callback.
 */
typedef struct cvc_proj_scenario {
	uint64_t index;            /* position in the expansion, 0-based */
	const char *study;         /* study name */
	/* model */
	const char *model;         /* model name, "" when not given */
	double layers, hidden, heads, kv_heads, ffn, vocab, seq, experts, top_k;
	/* MoE (experts > 1; 0 for dense models): each routed expert's FFN
	 * width (0 = ffn) and the shared experts' total width, run on every
	 * token (0 = none): Megatron-Core's --moe-ffn-hidden-size and
	 * --moe-shared-expert-intermediate-size */
	double moe_ffn, shared_ffn;
	/* LatentMoE (Nemotron 3 Super and Ultra: Megatron-Core's
	 * --moe-latent-size, config.json moe_latent_size): the routed experts
	 * take in and give back this width, between a projection from the
	 * hidden size before the dispatch and one back after the combine; the
	 * router and the shared experts keep the hidden size (0 = none) */
	double moe_latent;
	/* which layers are MoE layers: layer i (0-based) is one when i >=
	 * moe_first_dense and (i - moe_first_dense) % moe_layer_freq == 0;
	 * the others are dense layers of width ffn (DeepSeek-V3's
	 * first_k_dense_replace = 3; Llama 4 Maverick's alternation: 1 and 2).
	 * Megatron-Core's --moe-layer-freq (an integer, or a list of that
	 * shape) and HF's first_k_dense_replace */
	double moe_first_dense, moe_layer_freq;
	/* routed tokens of the busiest expert-parallel rank over the mean: 1 =
	 * balanced (NeMo's forced-balanced benchmarks), a measured skew above;
	 * the busiest rank's experts and exchanges set the pace */
	double moe_imbalance;
	/* Megatron-Core's --moe-router-fusion (Transformer Engine's fused
	 * top-k, score and auxiliary-loss kernels) and --moe-permute-fusion
	 * (its fused permute / unpermute); 0: the unfused PyTorch ops */
	int moe_router_fusion, moe_permute_fusion;
	/* CUDA graphs over the layers (Megatron-Core's --cuda-graph-impl with
	 * the scopes NeMo's recipes set: attention, MoE router, dispatch
	 * preprocessing and shared experts): their kernels launch without the
	 * gap between back-to-back kernels and without the host's per-launch
	 * work; an MoE layer's routed experts and their permutation stay
	 * outside the graph (their token counts vary) unless moe_token_drop.
	 * 2: the whole forward and backward of a step's micro-batches captured
	 * (--cuda-graph-impl full_iteration; the optimizer step stays eager):
	 * no launch gap, no host work and no host synchronisation in it, which
	 * needs static shapes (token drop, or HybridEP's capacity-sized expert
	 * buffers) */
	int cuda_graphs;
	/* framework torchtitan: torch.compile over each block (its norms,
	 * activation and rope one kernel each); 0: eager PyTorch, each op a
	 * kernel.  Other frameworks: not read */
	int compile;
	/* token drop with the experts' inputs padded to their capacity
	 * (Megatron-Core's --moe-expert-capacity-factor 1 with
	 * --moe-pad-expert-input-to-capacity; NeMo's "tokendrop" benchmarks):
	 * static shapes, so no host synchronisation per MoE layer for the token
	 * counts, the routed experts inside a CUDA graph, and no rank past its
	 * capacity; 0: dropless */
	int moe_token_drop;
	/* data-parallel gradients accumulated and reduced in fp32 (Megatron-
	 * Core's grad_reduce_in_fp32, Megatron-LM's
	 * --accumulate-allreduce-grads-in-fp32): 4 B a parameter in the grad
	 * buffer and on the wire, else the weights' 16 bits and an fp32 copy of
	 * the optimizer's shard; -1 = auto: fp32 with fp32 weights or under
	 * torchtitan, else 16-bit as NVIDIA's published performance recipes
	 * run (projector/run.c) */
	int grad_reduce_fp32;
	/* fp8 weights held as the parameters themselves (Megatron-Core's
	 * --fp8-param-gather; NeMo's and Megatron-Bridge's fp8 precision
	 * recipes set it): no 16-bit copy of the transformer layers' weights,
	 * and the distributed optimizer gathers them in fp8 */
	int fp8_param_gather;
	/* the optimizer's moments (Adam's two, SGD's momentum): 0 fp32, 1 bf16
	 * (Megatron-Core's --exp-avg-dtype / --exp-avg-sq-dtype with its
	 * precision-aware optimizer; DeepSeek-V3's AdamW) */
	int optimizer_moments;
	/* activations of the first cpu_offload_layers transformer layers
	 * copied to the host in the forward and back in the backward, beside
	 * the compute (Megatron-Core's --cpu-offloading-num-layers: pp 1 only,
	 * no recompute, no CUDA graphs); 0: none */
	double cpu_offload_layers;
	/* submodules whose input activations every layer copies to the host
	 * in the forward and back before the backward (Megatron-Core's
	 * --fine-grained-activation-offloading --offload-modules, as words:
	 * "attn_norm qkv_linear core_attn attn_proj mlp_norm expert_fc1
	 * moe_act fused_group_mlp"); "" = none */
	const char *offload_modules;
	/* the routed experts' MLP as Transformer Engine's fused op runs it
	 * (Megatron-Core's --use-transformer-engine-op-fuser with
	 * NVTE_CUTEDSL_FUSED_GROUPED_MLP=1; Megatron-Bridge's
	 * cutedsl_fused_grouped_mlp): one grouped launch per GEMM over the
	 * local experts, the activation and the quantization of its output in
	 * the first GEMM's epilogue, their backward in the second's dgrad;
	 * Blackwell, MXFP8 or NVFP4 only */
	int fused_grouped_mlp;
	/* multi-token prediction modules (DeepSeek-V3: 1; Megatron-Core's
	 * --mtp-num-layers) on the last stage: each one more layer, a
	 * projection of 2h to h and the logits and loss again */
	double mtp_layers;
	int ffn_type;              /* enum cvc_proj_ffn */
	/* hybrid models: one character per layer, as Megatron-Core's
	 * --hybrid-override-pattern and Hugging Face's hybrid_override_pattern
	 * write it (M Mamba-2 mixer, * attention, - dense MLP, E MoE; each its
	 * own pre-norm residual block); "" = every layer attention + FFN */
	const char *layer_pattern;
	/* Mamba-2 mixers (Dao & Gu 2024): heads (0 = 2 hidden / head_dim), head
	 * width, state size, B/C groups, conv1d kernel, SSD chunk length */
	double mamba_heads, mamba_head_dim, mamba_state, mamba_groups, mamba_conv, mamba_chunk;
	/* local attention: each query sees the window tokens before it (0 =
	 * none), on every layer but each window_skip_freq-th (1-based; 0: on
	 * every layer: Megatron-Core's --window-attn-skip-freq); chunked: within
	 * aligned chunks of window tokens instead (Llama 4) */
	double window, window_skip_freq;
	int window_chunked;
	/* attention heads' width: head_dim (0 = hidden / heads; Megatron's
	 * --kv-channels); multi-latent attention (DeepSeek-V2/V3, Megatron-Core
	 * --multi-latent-attention) when kv_lora_rank > 0: queries through a
	 * q_lora_rank latent (0: projected directly), keys and values through
	 * a kv_lora_rank latent, query/key heads of head_dim + qk_rope_dim,
	 * value heads of v_head_dim (0 = head_dim) */
	double head_dim, q_lora_rank, kv_lora_rank, qk_rope_dim, v_head_dim;
	int tie_embeddings;        /* output layer shares the input embedding's
				    * weights (Megatron-Core's default); 0: its own
				    * (--untie-embeddings-and-output-weights: Llama,
				    * Mistral, Qwen, DeepSeek) */
	/* training */
	double global_batch, micro_batch;
	int dtype, recompute, optimizer, attention;
	/* with recompute selective: the submodules recomputed, Megatron-Core's
	 * --recompute-modules as words ("core_attn moe_act layernorm
	 * mla_up_proj mlp moe shared_experts"); "" = core_attn */
	const char *recompute_modules;
	int framework;             /* enum cvc_proj_framework */
	int fp8_recipe;            /* enum cvc_proj_fp8_recipe (dtype fp8) */
	int fp8_attention;         /* attention in fp8 too (TE's fp8_dpa); else bf16 */
	int dropout;               /* attention and residual dropout (GPT-3 era) */
	double zero;               /* 0..3; fsdp = zero 3 */
	double shard_group;        /* ZeRO/FSDP shard group (hybrid: replicate
				    * across groups); 0 = all of dp*cp */
	/* parallelism */
	double tp, pp, vpp, dp, cp, ep;
	double etp;                /* expert tensor parallel (MoE); 0 = tp */
	int sp;                    /* sequence parallel with tp */
	double first_stage_layers, last_stage_layers; /* uneven pipeline: 0 = auto */
	/* Megatron-Core's --pipeline-model-parallel-layout ("Et*3|(tt|)*29,m|L":
	 * E embedding, t decoder layer, m prediction layer, L loss, '|' between
	 * virtual stages); "" = the stages from the fields above */
	const char *pp_layout;
	/* 3D tensor parallelism (AxoNN, Singh et al. 2023): a grid of tp_row x
	 * tp_col x tp_depth GPUs per replica (docs/SCENARIOS.md "3D tensor
	 * parallelism"); all 0 = Megatron's 1D tensor parallelism */
	double tp_row, tp_col, tp_depth;
	/* hardware */
	const char *gpu;           /* hardware catalog name */
	double gpus, nodes, gpus_per_node;
	/* GPUs one NVLink fabric joins (NVL72: 72 over trays of 4); 0 = the
	 * catalog's domain of gpu when it spans hosts, else gpus_per_node */
	double nvlink_domain;
	/* with a low-precision dtype, layers the recipe keeps in bf16: the
	 * first and the last this many (Megatron-Core's --first-last-layers-bf16
	 * with --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16) */
	double bf16_layers_first, bf16_layers_last;
	double scale_compute, scale_hbm_bw, scale_hbm_cap, scale_intra_bw, scale_inter_bw;
	/* communication */
	int dp_overlap, tp_overlap;
	int tp_overlap_ag, tp_overlap_rs; /* per collective (sp): -1 = tp_overlap */
	int ep_dispatcher;         /* enum cvc_proj_dispatcher */
	int ep_dispatch_fp8;       /* both dispatches (the forward's and the
				    * backward's, of the down projection's output
				    * gradient) in fp8 with 1x128 scales (DeepSeek-V3;
				    * the combines stay bf16) */
	/* the host's time per kernel launch, us: PROJ_AUTO (-1) the measured
	 * one (cvc_model_host_launch_us()); 0 a host that never holds the GPU
	 * back (docs/MODELS.md "Host time per launch") */
	double host_launch_us;
	double ep_sms;             /* SMs the deepep / hybridep kernels hold
				    * (Megatron-Core's moe_flex_dispatcher_num_sms);
				    * -1 = auto, the backend's default */
	int pp_schedule;           /* enum cvc_proj_pp_schedule */
	double moe_router_group_topk; /* node-limited routing: a token's experts on
				    * at most this many nodes (0 = any) */
	int ep_overlap;            /* MoE all-to-alls of one micro-batch under the
				    * compute of another (Megatron-Core's combined
				    * 1F1B, --overlap-moe-expert-parallel-comm) */
	double bucket_mb, local_sgd_h, clusters, inter_cluster_gbps, contention;
	int outer_overlap;         /* local SGD's outer exchange streamed under the
				    * next H inner steps (Streaming/eager DiLoCo);
				    * 0: blocking at the sync step */
	/* economics */
	double train_tokens, usd_per_gpu_hour, gpu_power_w, pue;
} cvc_proj_scenario;

/* Fills sc with the documented defaults (docs/SCENARIOS.md). */
CVC_API void cvc_proj_scenario_default(cvc_proj_scenario *sc);

typedef struct cvc_proj_result {
	int valid;                 /* 0: layout impossible; reason says why */
	const char *reason;        /* static string, "" when valid */
	double step_s;             /* one optimizer step */
	double compute_s;          /* compute on the critical path (incl. contention) */
	double bubble_s;           /* pipeline fill/drain idle */
	double comm_s;             /* all communication time, hidden or not */
	double hidden_s, exposed_s;
	double comm_type_s[CVC_PROJ_COMM_N];
	double hidden_type_s[CVC_PROJ_COMM_N];
	double exposed_type_s[CVC_PROJ_COMM_N];
	double contention_s;       /* slowdown of compute that overlapped comm
				    * (incl. SMs held back for TP overlap) */
	double gaps_s;             /* between back-to-back kernels (in compute_s) */
	/* the GPU waiting for a host that launches its kernels slower than it
	 * runs them (in compute_s; docs/MODELS.md "Host time per launch") */
	double host_s;
	/* the GPU waiting for activation copies to and from the host that take
	 * longer than the layers they run beside (cpu_offload_layers,
	 * offload_modules; in compute_s) */
	double offload_s;
	double comm_share;         /* comm_s / step_s: the part of the step that is
				    * communication, hidden or not (the seed
				    * papers' "fraction of runtime") */
	double exposed_share;      /* exposed_s / step_s */
	double comm_to_compute;    /* comm_s / compute_s: above 1, no overlap can
				    * hide all communication (NaN without compute) */
	double mem_gb;             /* peak memory per GPU */
	double mem_params_gb;      /* of it: weights, gradients, optimizer states */
	double mem_act_gb;         /* activations of the micro-batches in flight */
	double mem_buf_gb;         /* buffers (fp32 logits) */
	double mem_offload_gb;     /* activations held in host memory instead
				    * (cpu_offload_layers, offload_modules;
				    * not in mem_gb) */
	double hbm_gb;             /* usable capacity per GPU */
	/* the model's parameters in billions as published totals count them
	 * (multi-token-prediction modules left out), and of them what one
	 * token runs (the routed experts it is not sent to left out) */
	double params_b, active_params_b;
	int fits;
	double model_flops;        /* per step, without recomputation */
	double hw_flops;           /* per step, as executed (with recompute) */
	double mfu, hfu;
	double tokens_per_s, tokens_per_s_per_gpu;
	double train_days, gpu_hours, energy_mwh, cost_usd;
	double half_tokens_per_s;  /* same model at half the GPUs (NaN if none) */
	double marginal_tokens_per_gpu; /* (tps - half) / (gpus - gpus/2) */
	/* 90% intervals of the metrics above (docs/MODELS.md "Uncertainty"):
	 * from each priced operator's measured error, propagated through the
	 * step as a linearised sum; NaN with intervals off */
	double sigma;              /* relative standard error of step_s */
	double step_s_lo, step_s_hi, compute_s_lo, compute_s_hi, comm_s_lo, comm_s_hi;
	double comm_type_lo_s[CVC_PROJ_COMM_N], comm_type_hi_s[CVC_PROJ_COMM_N];
	double hidden_s_lo, hidden_s_hi, exposed_s_lo, exposed_s_hi;
	double comm_share_lo, comm_share_hi, exposed_share_lo, exposed_share_hi;
	double mfu_lo, mfu_hi, tokens_per_s_lo, tokens_per_s_hi;
	double tokens_per_s_per_gpu_lo, tokens_per_s_per_gpu_hi;
	double train_days_lo, train_days_hi, cost_usd_lo, cost_usd_hi;
	/* step time / step time with one resource doubled (the study runner;
	 * NaN with intervals off): which upgrade pays */
	double gain_compute, gain_hbm_bw, gain_hbm_cap, gain_intra_bw, gain_inter_bw;
	/* local SGD / DiLoCo, the token side of syncing every H steps
	 * (docs/MODELS.md "Local SGD / DiLoCo token penalty"): the loss penalty
	 * of the published law in %, the tokens needed for synchronous data
	 * parallel's loss over train_tokens (_lo/_hi: the law's own residual),
	 * throughput in those tokens and days to that loss.  0, 1, tokens_per_s
	 * and train_days at H = 1 */
	double loss_penalty_pct;
	double token_factor, token_factor_lo, token_factor_hi;
	double eff_tokens_per_s, eff_tokens_per_s_lo, eff_tokens_per_s_hi;
	double days_to_loss;
	/* operators priced outside what was measured, and how far ("" none):
	 * items "what: why" joined by "; ", each whole (room for every item
	 * of every component) */
	char warnings[1024];
} cvc_proj_result;

/*
 * Evaluates one scenario (dp, nodes and defaults derived as in a study).
 * Never fails: an impossible layout or unknown GPU gives valid = 0 and a
 * reason.  The marginal fields are NaN (evaluate does not look at other
 * sizes; the study runner fills them).
 */
CVC_API void cvc_proj_evaluate(cvc_proj_ctx *ctx, const cvc_proj_scenario *sc,
			       cvc_proj_result *out);

/* ---- the operators of one step ----------------------------------------------- */

enum cvc_proj_op_kind {
	CVC_PROJ_OP_GEMM = 0, /* b batched m x n x k */
	CVC_PROJ_OP_ATTN = 1, /* attention core (fused kernel) */
	CVC_PROJ_OP_MEM = 2,  /* memory-bound op of a class moving bytes */
	CVC_PROJ_OP_COLL = 3  /* collective or point-to-point transfer */
};

/* Pipeline stages an operator runs on. */
enum cvc_proj_stage {
	CVC_PROJ_STAGE_ALL = 0,   /* every stage (per-layer and per-step ops) */
	CVC_PROJ_STAGE_FIRST = 1, /* first stage only: embedding */
	CVC_PROJ_STAGE_LAST = 2   /* last stage only: logits and loss */
};

/*
 * One operator as the projector prices it: the sizes are exactly those
 * handed to the operator models (cvc_model.h), rounded to integers, bytes
 * already divided by the scenario's hbm_bw (membound) or intra/inter_bw
 * (collective: intra when group <= per_node) scale factor.  Unused fields 0.
 *   gemm:       dtype, b, m, n, k; sub, bit flags: 1 when the layers'
 *               format has no measured GEMM efficiency of its own (mxfp4,
 *               fp8 with blockwise scales: priced as its sibling, interval
 *               wider); 2 a grouped GEMM of b groups of m rows (MoE
 *               experts: cvc_model_grouped_slowdown()); 4 fp8 with MXFP8
 *               block scales (cvc_model_mxfp8_factor()); 8 with 1, fp8:
 *               a weight-gradient GEMM of 1x128 block scales
 *               (cvc_model_blockfp8_wgrad_factor())
 *   attention:  dtype, b (batch), heads, kv_heads, m (seq_q), n (seq_kv),
 *               k (head_dim), causal, backward
 *   membound:   sub (cvc_model_mem), bytes
 *   collective: sub (cvc_model_coll), bytes (nccl-tests size convention),
 *               group, per_node (group members per node), comm
 * dtype is the scenario's cvc_proj_dtype; the pricer maps it to the GPU's
 * tensor path (a GPU without it falls back, e.g. V100 bf16 -> fp16).
 * The projector adds a per-hop network latency to collectives spanning
 * more than two nodes (docs/SCENARIOS.md).
 */
typedef struct cvc_proj_op {
	int kind;                  /* enum cvc_proj_op_kind */
	int dtype, sub;
	int64_t b, m, n, k, heads, kv_heads;
	int causal, backward;
	int64_t bytes;
	int group, per_node;
	int comm;                  /* collective: enum cvc_proj_comm it is booked under; else -1 */
	int stage;                 /* enum cvc_proj_stage */
	double count;              /* runs per optimizer step on the busiest GPU (> 0;
				    * fractional for collectives amortised over steps) */
	/* collective: an expert-parallel exchange by DeepEP or HybridEP
	 * (cvc_model_ep_backend, 0 = NCCL's collective): its phase
	 * (cvc_model_ep_phase), bytes = to the distinct ranks reached over
	 * NVLink, net_bytes = leaving the NVLink domain, sms = SMs held */
	int ep_backend, ep_phase, sms;
	int64_t net_bytes;
} cvc_proj_op;

/* Called once per operator; nonzero stops the enumeration. */
typedef int (*cvc_proj_op_fn)(void *user, const cvc_proj_op *op);

/*
 * Enumerates the operators of one optimizer step of sc (as a study's run
 * callback hands it: layout, dp and defaults derived), by the same
 * decomposition cvc_proj_evaluate() prices: compute of every layer and of
 * the first/last stage, and every collective (the first/last stage's own,
 * their vocabulary-parallel embedding's and output layer's, tagged with
 * their stage) except the inter-cluster
 * exchange of multi-cluster runs (a bandwidth formula, not a model query).
 * Needs no ctx and no catalog.  Returns the number of calls made (0 when
 * the layout has no micro-batches or layers).
 */
CVC_API size_t cvc_proj_scenario_ops(const cvc_proj_scenario *sc, cvc_proj_op_fn fn,
				     void *user);

/* ---- models by name ---------------------------------------------------------- */

/*
 * Writes the shipped catalog of open models (projector/archs.yaml:
 * `model: NAME` in a scenario file, docs/SCENARIOS.md "Models by name") as
 * CSV: name, aliases (space-separated), source, read.  CVC_ERR_IO on a
 * write error; CVC_ERR_INTERNAL (message in err) if the compiled-in
 * catalog is malformed.
 */
CVC_API cvc_status cvc_proj_archs_write(FILE *f, char *err, size_t errlen);

/* ---- studies ------------------------------------------------------------ */

typedef struct cvc_proj_study cvc_proj_study;

/*
 * Parses a scenario file held in memory (text need not be NUL-terminated).
 * name is used in messages ("'name': line 3, column 7: expected ...").  On
 * success *out owns a study to free with cvc_proj_study_free().  On
 * failure *out is still set so cvc_proj_study_errmsg() can be read (NULL
 * only on CVC_ERR_NOMEM); the status is CVC_ERR_FORMAT for bad input.
 */
CVC_API cvc_status cvc_proj_study_parse(const char *name, const char *text, size_t len,
					cvc_proj_study **out);
/* Reads path and parses it; CVC_ERR_IO when it cannot be read. */
CVC_API cvc_status cvc_proj_study_load(const char *path, cvc_proj_study **out);
/* The shipped default study (projector/studies/default.yaml). */
CVC_API cvc_status cvc_proj_study_default(cvc_proj_study **out);
/* Accepts NULL. */
CVC_API void cvc_proj_study_free(cvc_proj_study *st);
/* Message of the last failure; "" when none.  Never NULL (accepts NULL). */
CVC_API const char *cvc_proj_study_errmsg(const cvc_proj_study *st);
/* Study name (from `name:`, else the file name). */
CVC_API const char *cvc_proj_study_name(const cvc_proj_study *st);
/* Upper bound on the scenarios the study expands to (before filters). */
CVC_API double cvc_proj_study_size(const cvc_proj_study *st);

/* Called once per scenario that passed the filters; nonzero stops the run. */
typedef int (*cvc_proj_cb)(void *user, const cvc_proj_scenario *sc,
			   const cvc_proj_result *r);

/*
 * Called by cvc_proj_study_run once per point of the expansion it has
 * walked (an `auto` layout's point counts once, whatever it tries), with the
 * points walked so far and cvc_proj_study_size(): a sweep whose `where:`
 * lets few scenarios through can still say how far it is.  fn NULL: none.
 */
typedef void (*cvc_proj_walk_cb)(void *user, double walked, double size);
CVC_API void cvc_proj_study_on_walk(cvc_proj_study *st, cvc_proj_walk_cb fn, void *user);

enum {
	CVC_PROJ_NO_MARGINAL = 1 << 0, /* skip the half-GPU evaluation */
	CVC_PROJ_VALID_ONLY = 1 << 1   /* do not call back impossible layouts */
};

/*
 * Expands the study and calls cb for every scenario.  *count (may be NULL) receives the number of
 * callbacks made.  Returns CVC_OK, or CVC_ERR_FORMAT when a `where:`
 * expression fails at run time (message in the study), or CVC_ERR_USAGE if
 * cb stopped the run (count still set).
 */
CVC_API cvc_status cvc_proj_study_run(cvc_proj_study *st, cvc_proj_ctx *ctx,
				      int flags, cvc_proj_cb cb, void *user,
				      uint64_t *count);

/* ---- outputs -------------------------------------------------------------- */

/* Looks up a named metric ("step_s", "mfu", "tokens_per_s", ...) of r or sc;
 * CVC_ERR_NOTFOUND for an unknown name. */
CVC_API cvc_status cvc_proj_metric(const cvc_proj_scenario *sc, const cvc_proj_result *r,
				   const char *name, double *out);
/* Comma-separated list of the metric names, for --help and messages. */
CVC_API const char *cvc_proj_metric_names(void);

/* ---- rankings: the K best scenarios per group (--top K --by METRIC --per) --- */

/*
 * A ranking keeps, for each group of scenarios that share the values of
 * some fields (model, hardware and GPU count by default), the k scenarios
 * best by one metric.  Memory is at most groups x k rows however many
 * scenarios are offered, so a sweep of 10^7 scenarios can stream through.
 * Only what can run is ranked: invalid layouts, layouts that do not fit in
 * memory (unless include_unfit) and rows whose metric is NaN are dropped.
 * Not thread safe: one ranking per thread.
 */
typedef struct cvc_proj_top cvc_proj_top;

typedef struct cvc_proj_top_opts {
	long long k;           /* rows kept per group, 1..CVC_PROJ_TOP_MAX_K */
	const char *by;        /* cvc_proj_metric() name; NULL: tokens_per_s */
	int asc;               /* smaller is better (step_s, cost_usd) */
	/* comma-separated scenario fields (docs/SCENARIOS.md; aliases such as
	 * "model" work) or "hardware" (the GPU with its scale factors); "none"
	 * ranks all scenarios together; NULL: CVC_PROJ_TOP_PER_DEFAULT */
	const char *per;
	int include_unfit;     /* rank layouts that do not fit in memory too */
	/* the most memory the kept rows may hold, bytes; 0: half the
	 * machine's physical memory (past it the ranking stops with
	 * CVC_ERR_USAGE and what to change, where the kernel would kill it) */
	size_t max_bytes;
} cvc_proj_top_opts;

#define CVC_PROJ_TOP_MAX_K 10000000LL
#define CVC_PROJ_TOP_MAX_GROUPS ((size_t)1 << 20)
#define CVC_PROJ_TOP_PER_DEFAULT "model,hardware,gpus"

/*
 * Checks opts and makes an empty ranking in *out (free with
 * cvc_proj_top_free).  CVC_ERR_USAGE with a message in err naming the bad
 * value and the valid ones: k out of range, an unknown metric for by, an
 * unknown or empty word in per.  CVC_ERR_NOMEM.
 */
CVC_API cvc_status cvc_proj_top_new(const cvc_proj_top_opts *opts, cvc_proj_top **out,
				    char *err, size_t errlen);
/* Accepts NULL. */
CVC_API void cvc_proj_top_free(cvc_proj_top *t);
/*
 * Offers one scenario (a cvc_proj_cb's arguments; both are copied, the
 * strings sc borrows from its study must outlive t).  CVC_ERR_NOMEM, or
 * CVC_ERR_USAGE when a new group would pass CVC_PROJ_TOP_MAX_GROUPS (the
 * message in err).
 */
CVC_API cvc_status cvc_proj_top_add(cvc_proj_top *t, const cvc_proj_scenario *sc,
				    const cvc_proj_result *r, char *err, size_t errlen);
/*
 * Calls cb with the kept rows: groups in the order their first scenario
 * was offered, each group best first (ties: lower index first).  A nonzero
 * return from cb stops and is returned as CVC_ERR_USAGE; else CVC_OK.
 * *groups (may be NULL) receives the number of groups with a row.
 */
CVC_API cvc_status cvc_proj_top_each(cvc_proj_top *t, cvc_proj_cb cb, void *user,
				     size_t *groups);

/* The --by column as the output names it: an alias resolved ("tokens" ->
 * "train_tokens").  Borrowed from t. */
CVC_API const char *cvc_proj_top_by(const cvc_proj_top *t);

/*
 * 0 when the --by column ranked nothing: every group offered two or more
 * rows and each had one value in all of them (a field the study holds
 * constant, such as train_tokens); 1 otherwise.  A ranking by it would
 * keep an arbitrary K, so the CLI refuses it.
 */
CVC_API int cvc_proj_top_ranked(const cvc_proj_top *t);
/* Comma-separated list of the words per accepts: "hardware", "none" and the
 * scenario fields, for --help and messages. */
CVC_API const char *cvc_proj_group_names(void);

/*
 * Calls cb with the name of every column of the projector's CSV, in its
 * order (the JSON's keys are the same): cvc_proj_csv_header's list.
 */
CVC_API void cvc_proj_columns_each(void (*cb)(void *arg, const char *name), void *arg);

/*
 * What column name of the projector's CSV/JSON means (projector/coldoc.c,
 * docs/COLUMNS.md): *unit (static) and the definition into def.  A type's
 * column (comm_tp_s) takes its pattern's entry (comm_<t>_s), an interval's
 * end (X_lo, X_hi) X's unit.  CVC_ERR_NOTFOUND when it has none.
 */
CVC_API cvc_status cvc_proj_column_doc(const char *name, const char **unit, char *def,
				       size_t len);

/* CSV: one header line, then one line per scenario. */
/*
 * A model's parameters in billions from the scenario fields of a
 * projection row (keys[i] = vals[i] as the CSV prints them; keys that are
 * not model fields and empty values are skipped, the rest default), as
 * the projector's params_b and active_params_b columns count them.
 * CVC_ERR_FORMAT (both NaN) when a value does not parse or the model does
 * not finalize.
 */
CVC_API cvc_status cvc_proj_params_of(const char *const *keys, const char *const *vals, size_t n,
				      double *total_b, double *active_b);
CVC_API void cvc_proj_csv_header(FILE *f);
CVC_API void cvc_proj_csv_row(FILE *f, const cvc_proj_scenario *sc, const cvc_proj_result *r);
/* JSON: {"study":..,"scenarios":[objects],"provenance":{..}}; begin, rows
 * (first = 1 for the first), end.  End writes the provenance of what ctx
 * priced (cvc_proj_provenance_write) unless ctx is NULL, and returns its
 * status. */
CVC_API void cvc_proj_json_begin(FILE *f, const char *study);
CVC_API void cvc_proj_json_row(FILE *f, int first, const cvc_proj_scenario *sc,
			       const cvc_proj_result *r);
CVC_API cvc_status cvc_proj_json_end(FILE *f, cvc_proj_ctx *ctx);

/* ---- provenance: what priced a projection ----------------------------------- */

/*
 * Writes, as one JSON object (docs/SCENARIOS.md "Provenance"), what priced
 * the scenarios ctx has evaluated so far: cvc_version; database (its path,
 * null for none) and models_from ("none: spec-sheet defaults" without
 * one); the hardware catalog file(s); "origins", one element per GPU (as
 * the scenarios name it) and what it priced: gemm and attention per dtype,
 * membound per class, collective per (collective, model) with the times it
 * was priced, each with the origin text of cvc_model_origin() and the
 * model_id it names (null: none); "models", every fitted model those name
 * (id, kind, gpu, system, op, nranks, gpus_per_node, n_points, r2,
 * mape_pct, extrap_mape_pct, domain_min, domain_max, domain_unit, source);
 * "catalog", every catalog entry used (name, kind, base, source); and
 * "incomplete" when a list was cut at its bound.  May build pricers in ctx
 * (not thread safe, as ctx).  CVC_ERR_DB (message in cvc_proj_ctx_errmsg)
 * when a model cannot be read back, CVC_ERR_IO on a write error.
 */
CVC_API cvc_status cvc_proj_provenance_write(cvc_proj_ctx *ctx, FILE *f);

/*
 * The side file beside a projection written to path, which carries its
 * provenance when the projection is CSV: path with a final ".csv" or
 * ".json" replaced by ".provenance.json" ("study.csv" ->
 * "study.provenance.json"), other names with it appended.  CVC_ERR_USAGE
 * when buf (len bytes) is too small.
 */
CVC_API cvc_status cvc_proj_provenance_path(const char *path, char *buf, size_t len);

/* ---- validation against published measurements ---------------------------- */

/*
 * Why a row of a validated table was not projected: the reasons
 * `cvc validate` counts (docs/SCENARIOS.md "validate").  Values are stable.
 */
enum cvc_proj_vwhy {
	CVC_PROJ_VWHY_ROW = 0,    /* the record itself: quoting, cell count, empty */
	CVC_PROJ_VWHY_CELL,       /* a cell that could not be read as its column */
	CVC_PROJ_VWHY_MISSING,    /* the layout or the model's shape not given */
	CVC_PROJ_VWHY_HARDWARE,   /* a gpu the hardware catalog does not name */
	CVC_PROJ_VWHY_UNMODELLED, /* a stack, kernel or setting cvc has no model of */
	CVC_PROJ_VWHY_INVALID,    /* no valid scenario: layout, sizes, memory */
	CVC_PROJ_VWHY_MEASURE,    /* no measured figure cvc can compare: none, or TFLOP/s of no known convention */
	CVC_PROJ_VWHY_STRICT,     /* --strict: a value the row did not state */
	CVC_PROJ_VWHY_N
};

/* The short name of a reason ("cell", "layout or shape", ...); "" out of range. */
CVC_API const char *cvc_proj_vwhy_name(int why);

/* The FLOP conventions a TFLOP/s or MFU figure can be read with
 * (`--flops`, a `flops_convention` cell): the name of the i-th, NULL past
 * the last (fewer than CVC_PROJ_FLOPS_MAX). */
#define CVC_PROJ_FLOPS_MAX 8
CVC_API const char *cvc_proj_flops_convention(int i);

/* Accuracy over a set of validated rows. */
typedef struct cvc_proj_vstats {
	int rows;                /* data rows read */
	int measured;            /* rows carrying a measured figure (a cell of a
				  * measured column that is not empty) */
	int expressible;         /* rows projected (a scenario and a measured figure) */
	int not_projected[CVC_PROJ_VWHY_N]; /* rows not projected, by reason */
	double mape_pct;         /* mean |error| on tokens/s per GPU, % */
	double median_pct;       /* median |error|, % */
	double within10_pct;     /* share of expressible rows with |error| <= 10%, % */
	double bias_pct;         /* mean signed error, % (> 0: projected too fast) */
	double naive_mape_pct;   /* the naive predictor's MAPE on the same rows */
	double skill_pct;        /* 100 (1 - mape / naive_mape) */
	double coverage_pct;     /* rows whose measurement lies in the 90% interval */
	double median_halfwidth_pct; /* median (hi - lo) / 2 / projected, % */
	int repeat_sets;         /* sets of two or more projected rows that cvc
				  * projects alike (the same scenario as read) */
	int repeat_rows;         /* the rows in those sets */
	double floor_pct;        /* the MAPE of the best one figure per such set
				  * (0 for the other rows), over the projected
				  * rows: what the measurements' own disagreement
				  * leaves to any projection of these rows */
	int regressed_rows;      /* projected rows measured in a release their
				  * stack's own issue tracker records as
				  * regressed for that model and GPU (said in
				  * each row's notes; counted in every figure
				  * above) */
	double mape_unregressed_pct; /* MAPE over the other projected rows (NaN
				  * when there are none of either) */
	int tflops_pairs;        /* projected rows that print TFLOP/s beside the
				  * tokens/s or step time they were compared on */
	int tflops_agree[CVC_PROJ_FLOPS_MAX]; /* of those, the rows whose TFLOP/s
				  * under FLOP convention i
				  * (cvc_proj_flops_convention) give their
				  * tokens/s within 1%: a row may agree with
				  * several, as conventions can coincide */
	int tflops_agree_none;   /* the rows no convention reproduces */
	int unfit_rows;          /* projected rows cvc's memory count says do not
				  * fit, though each ran: misses of that count */
	double unfit_worst_pct;  /* the largest of their excesses over the
				  * usable HBM, % */
} cvc_proj_vstats;

/* One value of the --by column and its rows' accuracy. */
typedef struct cvc_proj_vgroup {
	char key[128];
	cvc_proj_vstats st;
} cvc_proj_vgroup;

typedef struct cvc_proj_validation {
	cvc_proj_vstats all;
	cvc_proj_vgroup *groups; /* by first appearance; NULL without opts->by */
	size_t ngroups;
} cvc_proj_validation;

/* Frees v->groups (accepts NULL). */
CVC_API void cvc_proj_validation_release(cvc_proj_validation *v);

typedef struct cvc_proj_validate_opts {
	const char *flops; /* FLOP convention of TFLOP/s and MFU columns in rows
			    * that name none and whose text names none (NULL:
			    * such rows are not read) */
	const char *by;    /* column whose values group the accuracy (NULL: none) */
	int strict;        /* every value a row does not state (a default, a
			    * guess, a remark read, an ambiguity resolved)
			    * leaves the row unprojected instead of assumed */
} cvc_proj_validate_opts;

/*
 * Reads a table of measured runs (RFC 4180 CSV, or ';'/tab separated;
 * docs/SCENARIOS.md, "validate"), projects every row and writes the table
 * back to out with four columns added: predicted_tokens_per_s_per_gpu,
 * measured_tokens_per_s_per_gpu, error_pct (signed) and assumed (every
 * value not read verbatim from a numeric cell, with the text it came from,
 * or "not projected: " and why).  Accuracy goes to *sum (release it).  The
 * naive predictor runs every row at 40% of its GPU's dense bf16 peak, FLOPs
 * per token as cvc's mfu counts them.  opts may be NULL.  A row that cannot
 * be read or projected (an odd cell, bad quoting, a wrong cell count) is
 * written with its reason and counted, never an error of the file.
 * Errors: CVC_ERR_IO, CVC_ERR_FORMAT with "'file': line N: expected ..." in
 * err when the file is not a table (no header with the needed columns, a
 * binary file, empty), CVC_ERR_USAGE (unknown convention or --by column).
 */
CVC_API cvc_status cvc_proj_validate(const char *path, cvc_proj_ctx *ctx,
				     const cvc_proj_validate_opts *opts, FILE *out,
				     cvc_proj_validation *sum, char *err, size_t errlen);

/* Megatron model FLOPs per iteration with full recomputation (Narayanan
 * et al. 2021, eq. 3): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). */
CVC_API double cvc_proj_megatron_flops(double batch, double seq, double layers,
				       double hidden, double vocab);

#endif
