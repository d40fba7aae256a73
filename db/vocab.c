/*
 * vocab.c - the shared words (cvc_vocab.h): hardware dtypes, collectives
 * and their bus-bandwidth factors, memory-bound classes.  Moved here from
 * models/ so that the calibration runner and the importers can name them
 * without calling the models (issue 15).
 */
#include <ctype.h>
#include <string.h>

#include "cvc/cvc_vocab.h"

void cvc_name_fold(const char *s, char *out, size_t cap)
{
	size_t j = 0;

	if (!cap)
		return;
	for (; s && *s && j + 1 < cap; s++)
		if (isalnum((unsigned char)*s))
			out[j++] = (char)tolower((unsigned char)*s);
	out[j] = '\0';
}

int cvc_hta_is_comm(const char *name)
{
	if (!name)
		return 0;
	return strncmp(name, "nccl", 4) == 0 || strstr(name, "ncclKernel") ||
	       strstr(name, "ncclDevKernel");
}

static const char *const dtype_names[CVC_HW_NDTYPE] = {"fp32", "tf32", "bf16", "fp16", "fp8",
									 "fp4"};

const char *cvc_hw_dtype_name(cvc_hw_dtype d)
{
	return (unsigned)d < CVC_HW_NDTYPE ? dtype_names[d] : NULL;
}

int cvc_hw_dtype_bytes(cvc_hw_dtype d)
{
	switch (d) {
	case CVC_HW_FP8:
	case CVC_HW_FP4:
		return 1;
	case CVC_HW_BF16:
	case CVC_HW_FP16:
		return 2;
	default:
		return 4;
	}
}

double cvc_hw_dtype_size(cvc_hw_dtype d)
{
	/* NVFP4 (Transformer Engine docs, low_precision_training/nvfp4): E2M1
	 * values, an E4M3 scale per 16 consecutive elements */
	return d == CVC_HW_FP4 ? 0.5 + 1.0 / 16 : (double)cvc_hw_dtype_bytes(d);
}

cvc_status cvc_hw_dtype_parse(const char *s, cvc_hw_dtype *out)
{
	static const struct { const char *name; cvc_hw_dtype d; } tab[] = {
		{"fp32", CVC_HW_FP32}, {"f32", CVC_HW_FP32}, {"float", CVC_HW_FP32},
		{"float32", CVC_HW_FP32}, {"tf32", CVC_HW_TF32}, {"bf16", CVC_HW_BF16},
		{"bfloat16", CVC_HW_BF16}, {"fp16", CVC_HW_FP16}, {"f16", CVC_HW_FP16},
		{"half", CVC_HW_FP16}, {"float16", CVC_HW_FP16}, {"fp8", CVC_HW_FP8},
		{"f8", CVC_HW_FP8}, {"f4", CVC_HW_FP4}, {"e2m1", CVC_HW_FP4},
	};
	char first[32], norm[32];
	size_t i = 0;

	if (!s || !out)
		return CVC_ERR_USAGE;
	/* XLA spells "bf16xbf16->bf16": the first operand decides. */
	while (s[i] && s[i] != 'x' && s[i] != '-' && s[i] != '>' && i + 1 < sizeof first) {
		first[i] = s[i];
		i++;
	}
	first[i] = '\0';
	if (strncmp(s, "f8", 2) == 0 || strncmp(s, "fp8", 3) == 0 ||
	    strncmp(s, "float8", 6) == 0) {
		*out = CVC_HW_FP8;
		return CVC_OK;
	}
	/* "mxfp4" holds an 'x': the 4-bit names before the XLA split */
	if (strncmp(s, "mxfp4", 5) == 0 || strncmp(s, "nvfp4", 5) == 0 ||
	    strncmp(s, "fp4", 3) == 0 || strncmp(s, "float4", 6) == 0) {
		*out = CVC_HW_FP4;
		return CVC_OK;
	}
	cvc_name_fold(first, norm, sizeof norm);
	for (i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		if (strcmp(norm, tab[i].name) == 0) {
			*out = tab[i].d;
			return CVC_OK;
		}
	}
	return CVC_ERR_NOTFOUND;
}

static const char *const coll_names[CVC_MODEL_NCOLL] = {
	"allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "sendrecv"};

const char *cvc_model_coll_name(cvc_model_coll c)
{
	return (unsigned)c < CVC_MODEL_NCOLL ? coll_names[c] : NULL;
}

cvc_status cvc_model_coll_parse(const char *s, cvc_model_coll *out)
{
	static const struct { const char *name; cvc_model_coll c; } extra[] = {
		{"allgatherbase", CVC_MODEL_ALLGATHER}, {"allgatherintotensor", CVC_MODEL_ALLGATHER},
		{"reducescatterbase", CVC_MODEL_REDUCESCATTER},
		{"reducescattertensor", CVC_MODEL_REDUCESCATTER},
		{"alltoallbase", CVC_MODEL_ALLTOALL}, {"alltoallv", CVC_MODEL_ALLTOALL},
		{"collectivepermute", CVC_MODEL_SENDRECV}, {"send", CVC_MODEL_SENDRECV},
		{"recv", CVC_MODEL_SENDRECV}, {"p2p", CVC_MODEL_SENDRECV},
	};
	char norm[64];

	if (!s || !out)
		return CVC_ERR_USAGE;
	cvc_name_fold(s, norm, sizeof norm);
	for (int i = 0; i < CVC_MODEL_NCOLL; i++) {
		if (strcmp(norm, coll_names[i]) == 0) {
			*out = (cvc_model_coll)i;
			return CVC_OK;
		}
	}
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		if (strcmp(norm, extra[i].name) == 0) {
			*out = extra[i].c;
			return CVC_OK;
		}
	}
	return CVC_ERR_NOTFOUND;
}

double cvc_model_busbw_factor(cvc_model_coll c, int n)
{
	if (n < 1)
		n = 1;
	switch (c) {
	case CVC_MODEL_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case CVC_MODEL_ALLGATHER:
	case CVC_MODEL_REDUCESCATTER:
	case CVC_MODEL_ALLTOALL:
		return (double)(n - 1) / n;
	default:
		return 1.0;
	}
}

static const char *const mem_names[CVC_MODEL_NMEM] = {
	"elementwise", "norm", "reduction", "copy", "gather", "optimizer",
};

const char *cvc_model_mem_name(cvc_model_mem m)
{
	return (unsigned)m < CVC_MODEL_NMEM ? mem_names[m] : NULL;
}

cvc_status cvc_model_mem_parse(const char *s, cvc_model_mem *out)
{
	if (!s || !out)
		return CVC_ERR_USAGE;
	for (int i = 0; i < CVC_MODEL_NMEM; i++)
		if (strcmp(s, mem_names[i]) == 0) {
			*out = (cvc_model_mem)i;
			return CVC_OK;
		}
	return CVC_ERR_NOTFOUND;
}

/* The defaults first: index = backend + 2. */
static const char *const backend_names[CVC_ATTN_NBACKEND + 2] = {
	"torch-default", "te-default", "cudnn", "fa2", "fa4", "fa1"};

const char *cvc_model_attn_backend_name(cvc_model_attn_backend b)
{
	return (int)b >= -2 && (int)b < CVC_ATTN_NBACKEND ? backend_names[b + 2] : NULL;
}

cvc_status cvc_model_attn_backend_parse(const char *s, cvc_model_attn_backend *out)
{
	if (!s || !out)
		return CVC_ERR_USAGE;
	for (int i = 0; i < CVC_ATTN_NBACKEND + 2; i++)
		if (!strcmp(s, backend_names[i])) {
			*out = (cvc_model_attn_backend)(i - 2);
			return CVC_OK;
		}
	return CVC_ERR_NOTFOUND;
}

static const char *const copy_words[] = {NULL,   "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					  "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};

const char *cvc_copy_kind_word(unsigned kind)
{
	return kind < sizeof copy_words / sizeof copy_words[0] ? copy_words[kind] : NULL;
}

unsigned cvc_copy_kind_of(const char *w, size_t n)
{
	for (unsigned k = 1; w && k < sizeof copy_words / sizeof copy_words[0]; k++)
		if (strlen(copy_words[k]) == n && !strncmp(w, copy_words[k], n))
			return k;
	return 0;
}

const char *cvc_mem_kind_name(unsigned kind)
{
	static const char *const kinds[] = {"Unknown", "Pageable", "Pinned", "Device", "Array",
					    "Managed", "Device Static", "Managed Static"};

	return kind < sizeof kinds / sizeof kinds[0] ? kinds[kind] : kinds[0];
}
