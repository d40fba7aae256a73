/*
 * fuzz_cupti.c - libFuzzer harness of the CUPTI record decoder
 * (profiler/inject/decode.c) and the spool reader behind it.
 *
 * CUPTI records carry C pointers (kernel and marker names), so raw bytes
 * cannot be a buffer: the input is read as a list of records, each one
 * byte choosing the kind (one of the kinds the decoder knows, or an unknown
 * one) followed by the record's bytes, and every pointer field the decoder
 * reads is then pointed at a string from a fixed pool (or NULL).  Every
 * other field, and the buffer's cut, comes from the input.  The buffer goes
 * through cvci_decode() into a spool that cvc_profile_materialize() turns
 * into a database: the path a profiled program's records take.
 * Built only when the CUDA toolkit (cupti.h) is found.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "decode.h"
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
	CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
	CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MARKER,
	CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_RUNTIME,
	CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_DEVICE,
	CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_NAME,
	(CUpti_ActivityKind)0x7fff /* unknown: ends the walk */
};

static const char *const pool[] = {
	NULL, "", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
	"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "ProfilerStep#3", "NCCL", "NVIDIA H100 80GB HBM3",
	"a\"quote'and\\backslash", "\xff\xfe not utf-8"};

static const char *pick(uint8_t b)
{
	return pool[b % (sizeof pool / sizeof pool[0])];
}

/* Points the pointer fields the decoder dereferences at pool strings. */
static void fix_pointers(uint8_t *rec, CUpti_ActivityKind kind, uint8_t sel)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		((CUpti_ActivityKernel10 *)(void *)rec)->name = pick(sel);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		((CUpti_ActivityMarker2 *)(void *)rec)->name = pick(sel);
		((CUpti_ActivityMarker2 *)(void *)rec)->domain = pick((uint8_t)(sel >> 4));
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		((CUpti_ActivityDevice5 *)(void *)rec)->name = pick(sel);
		break;
	case CUPTI_ACTIVITY_KIND_NAME:
		((CUpti_ActivityName *)(void *)rec)->name = pick(sel);
		break;
	default:
		break;
	}
}

static const char *cbname(uint32_t domain, uint32_t cbid)
{
	return domain == 2 && cbid % 3 == 0 ? "cudaLaunchKernel" : NULL;
}

FZ_DEFINE_INITIALIZE

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static _Alignas(8) uint8_t buf[1 << 16];
	struct fz_state *s = fz_state();
	struct cvci_decoder dec;
	cvc_spool *sp = NULL;
	size_t used = 0, in = 0, valid;
	char spool[600];

	memset(buf, 0, sizeof buf);
	while (in + 2 <= size) {
		CUpti_ActivityKind k = kinds[data[in] % (sizeof kinds / sizeof kinds[0])];
		uint8_t sel = data[in + 1];
		size_t sz = cvci_record_size((uint32_t)k), take;

		in += 2;
		if (!sz)
			sz = 8;
		if (used + sz > sizeof buf)
			break;
		take = size - in < sz ? size - in : sz;
		memcpy(buf + used, data + in, take);
		in += take;
		*(CUpti_ActivityKind *)(void *)(buf + used) = k;
		fix_pointers(buf + used, k, sel);
		used += sz;
	}
	/* The valid-bytes count CUPTI hands over may cut the last record. */
	valid = used;
	if (size > 0 && (data[0] & 0x80) && (size_t)(data[size - 1] % 64) < used)
		valid = used - data[size - 1] % 64;

	fz_write((const uint8_t *)"", 0);  /* names the per-process paths */
	snprintf(spool, sizeof spool, "%s.spool", s->path);
	unlink(spool);
	if (cvc_spool_open(spool, 1u << 16, &sp) != CVC_OK)
		fz_fatal("cannot create the spool");
	if (cvci_decoder_init(&dec, sp) != CVC_OK)
		fz_fatal("decoder init");
	dec.cbname = cbname;
	cvci_put_proc(&dec, 0, 1, 1234, "fuzzhost", "fuzzrun", "fuzz");
	(void)cvci_decode(&dec, buf, valid);
	cvci_put_meta(&dec, "lost_records", (int64_t)dec.undecodable);
	cvci_decoder_release(&dec);
	if (cvc_spool_close(sp) != CVC_OK)
		fz_fatal("spool close");
	{
		cvc_status st = fz_spool(spool);

		if (st != CVC_OK) {
			/* The decoder wrote this spool: it must always materialize. */
			fprintf(stderr, "fuzz: cupti: spool of decoded records rejected: %s\n",
				s->msg);
			abort();
		}
	}
	unlink(spool);
	return 0;
}
