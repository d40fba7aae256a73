/*
 * cvc_vocab.h - the words every room shares, at the bottom beside the
 * database: kernel names (folding, HTA's communication rule), the data
 * types cvc prices (hardware dtypes), the collective
 * operations with their nccl-tests bus-bandwidth factors, the classes of
 * memory-bound operators, and the fused attention kernel libraries.  The importers, the calibration runner, the
 * models, the projector and the reports all speak them; no code here
 * calls anything above db/ (db/vocab.c).
 */
#ifndef CVC_VOCAB_H
#define CVC_VOCAB_H

#include <stddef.h>

#include "cvc.h"

/*
 * The form names are compared in: lowercase letters and digits only, the
 * rest dropped ("NVIDIA A100-SXM4-80GB" -> "nvidiaa100sxm480gb",
 * "_allgather_base" -> "allgatherbase").  out always NUL-terminated.
 */
CVC_API void cvc_name_fold(const char *s, char *out, size_t cap);

/*
 * HTA's communication rule on a kernel name: it starts with "nccl" or
 * contains "ncclKernel" / "ncclDevKernel".  The fallback for names no rule
 * classified (cvc analyze), and what the importers and the profile's
 * materialize step take for an NCCL kernel.  0 for NULL.
 */
CVC_API int cvc_hta_is_comm(const char *name);

/* ---- data types -------------------------------------------------------- */

/* Stable values: stored in the models table (dtype column as the name).  */
typedef enum cvc_hw_dtype {
	CVC_HW_FP32 = 0, /* plain fp32 (CUDA cores) */
	CVC_HW_TF32 = 1, /* fp32 inputs on tensor cores */
	CVC_HW_BF16 = 2,
	CVC_HW_FP16 = 3,
	CVC_HW_FP8 = 4,
	CVC_HW_FP4 = 5,  /* E2M1 with block scales (NVFP4, MXFP4; Blackwell) */
	CVC_HW_NDTYPE
} cvc_hw_dtype;

/* "fp32", "tf32", "bf16", "fp16", "fp8", "fp4"; NULL when out of range. */
CVC_API const char *cvc_hw_dtype_name(cvc_hw_dtype d);
/*
 * Parses a dtype, forgiving: fp32/f32/float/Float, tf32, bf16/bfloat16/
 * BFloat16, fp16/f16/half/Half, fp8/f8e4m3.../e5m2, fp4/nvfp4/mxfp4/e2m1.  XLA's
 * "bf16xbf16->bf16" forms are read by their first operand.  Returns
 * CVC_ERR_NOTFOUND when unknown.
 */
CVC_API cvc_status cvc_hw_dtype_parse(const char *s, cvc_hw_dtype *out);

/* Whole bytes per element of d (fp8 and fp4 1, bf16/fp16 2, fp32/tf32 4):
 * the bytes a buffer of d is allocated in. */
CVC_API int cvc_hw_dtype_bytes(cvc_hw_dtype d);
/* Bytes per element of d as a kernel moves it: cvc_hw_dtype_bytes(), but
 * fp4 0.5625 (two E2M1 values per byte and an E4M3 scale per 16: NVFP4,
 * the larger of the two 4-bit formats; MXFP4's E8M0 per 32 is 0.53125). */
CVC_API double cvc_hw_dtype_size(cvc_hw_dtype d);

/* ---- collectives and memory-bound classes ---------------------------------- */

/* Stable values: stored in the models table (op column as the name). */
typedef enum cvc_model_coll {
	CVC_MODEL_ALLREDUCE = 0,
	CVC_MODEL_ALLGATHER = 1,
	CVC_MODEL_REDUCESCATTER = 2,
	CVC_MODEL_ALLTOALL = 3,
	CVC_MODEL_BROADCAST = 4,
	CVC_MODEL_REDUCE = 5,
	CVC_MODEL_SENDRECV = 6, /* point to point, collective-permute */
	CVC_MODEL_NCOLL
} cvc_model_coll;

/* "allreduce", "allgather", ...; NULL when out of range. */
CVC_API const char *cvc_model_coll_name(cvc_model_coll c);
/*
 * Parses "allreduce", "all_reduce", "all-reduce", "AllReduce", "sendrecv",
 * "send_recv", "collective-permute", "_allgather_base", ... ;
 * CVC_ERR_NOTFOUND when unknown.
 */
CVC_API cvc_status cvc_model_coll_parse(const char *s, cvc_model_coll *out);

/*
 * nccl-tests bus bandwidth factor for n ranks (notes section e):
 * allreduce 2(n-1)/n, allgather/reducescatter/alltoall (n-1)/n, the rest 1.
 */
CVC_API double cvc_model_busbw_factor(cvc_model_coll c, int n);

/* Memory-bound operator classes (bandwidth efficiency differs). */
typedef enum cvc_model_mem {
	CVC_MODEL_MEM_ELEMENTWISE = 0, /* add, act, rope, cast */
	CVC_MODEL_MEM_NORM = 1,        /* layernorm, rmsnorm, softmax */
	CVC_MODEL_MEM_REDUCTION = 2,
	CVC_MODEL_MEM_COPY = 3,        /* device memcpy/memset */
	CVC_MODEL_MEM_GATHER = 4,      /* embedding lookup, index_select */
	CVC_MODEL_MEM_OPTIMIZER = 5,
	CVC_MODEL_NMEM
} cvc_model_mem;

/* "elementwise", "norm", "reduction", "copy", "gather", "optimizer"
 * (the op column of membound rows in the models table); NULL when out of
 * range. */
CVC_API const char *cvc_model_mem_name(cvc_model_mem m);
/* Parses the names above; CVC_ERR_NOTFOUND when unknown. */
CVC_API cvc_status cvc_model_mem_parse(const char *s, cvc_model_mem *out);

/* ---- attention kernel libraries ------------------------------------------ */

/* Fused attention kernel libraries with measured curves (docs/MODELS.md
 * "Attention"): cuDNN (Transformer Engine's default on Hopper and later),
 * FlashAttention-2, FlashAttention-4; and FlashAttention-1, priced as
 * FlashAttention-2 slowed by the end-to-end ratio Dao (2023) measured
 * (docs/MODELS.md "Attention"). */
typedef enum cvc_model_attn_backend {
	CVC_ATTN_DEFAULT_TORCH = -2, /* what PyTorch SDPA runs on this GPU */
	CVC_ATTN_DEFAULT_TE = -1,    /* what Transformer Engine runs on this GPU */
	CVC_ATTN_CUDNN = 0,
	CVC_ATTN_FA2 = 1,
	CVC_ATTN_FA4 = 2,
	CVC_ATTN_FA1 = 3,
	CVC_ATTN_NBACKEND
} cvc_model_attn_backend;

/* "cudnn", "fa2", "fa4", "fa1", "te-default", "torch-default"; NULL when out of
 * range. */
CVC_API const char *cvc_model_attn_backend_name(cvc_model_attn_backend b);
/* The reverse; CVC_ERR_NOTFOUND when s is none of them. */
CVC_API cvc_status cvc_model_attn_backend_parse(const char *s, cvc_model_attn_backend *out);

/* ---- copies ---------------------------------------------------------------- */

/* A memory kind in CUPTI's numbering (CUpti_ActivityMemoryKind: 0 Unknown,
 * 1 Pageable, 2 Pinned, 3 Device, 4 Array, 5 Managed, 6 Device Static,
 * 7 Managed Static) in the words Kineto puts in a copy's name ("Memcpy HtoD
 * (Pageable -> Device)", "Memset (Device)"), which cvc's profiler and the
 * Nsight Systems importer use too; "Unknown" past them. */
CVC_API const char *cvc_mem_kind_name(unsigned kind);
/* A copy kind in CUPTI's numbering (CUpti_ActivityMemcpyKind, which Nsight
 * Systems' ENUM_CUDA_MEMCPY_OPER follows: 1 HtoD, 2 DtoH, 3 HtoA, 4 AtoH,
 * 5 AtoA, 6 AtoD, 7 DtoA, 8 DtoD, 9 HtoH, 10 PtoP) as the word a copy's
 * name carries ("Memcpy HtoD ..."); NULL for 0 (unknown) and past them. */
CVC_API const char *cvc_copy_kind_word(unsigned kind);
/* The reverse, for the n bytes at w: the kind, 0 when they are no kind's
 * word. */
CVC_API unsigned cvc_copy_kind_of(const char *w, size_t n);

#endif
