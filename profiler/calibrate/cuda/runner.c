/*
 * runner.c - cvc_calibrate_run: measures one calibration plan (written by
 * `cvc calibrate`) on the GPUs of this job, one process per GPU.
 *
 *   cvc_calibrate_run --plan DIR/plan.csv --out DIR [--warmup N] [--reps N]
 *
 * Rank and size come from CVC_CAL_RANK/NRANKS/LOCAL_RANK/LOCAL_SIZE (set by
 * `cvc calibrate` for local runs), else from Open MPI, PMI or Slurm.  GEMM,
 * attention and memory-bound shapes are split round robin over the ranks
 * (each rank measures its share on its own GPU); every rank takes part in
 * every collective (sub-communicators by ncclCommSplit).  The NCCL unique
 * id travels through DIR/nccl.id, so DIR must be shared between nodes.
 *
 * Writes, per rank r, tables `cvc fit` reads:
 *   DIR/gemm.rR.csv                XLA matmul table format (+ time_us, origin)
 *   DIR/nccl_OP_gG_pnP.txt         nccl-tests log format (group rank 0)
 * and, for the record (no fitter reads them yet):
 *   DIR/attention.rR.csv, DIR/membound.rR.csv
 * Timing: CUDA events around `reps` back-to-back runs after `warmup`
 * untimed ones, averaged (nccl-tests' method).  Exit: 0, 1 on a CUDA/NCCL
 * failure, 2 without a GPU or with a bad plan.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "cvc/cvc_calshape.h" /* the plan file */
#include "cvc/cvc_vocab.h"  /* dtype and collective names, bus bandwidth */
#include "kernels.h"

#define WORKSPACE (64u << 20)
#define ID_WAIT_S 300

struct env {
	int rank, size, local_rank, local_size;
	int warmup, reps;
	const char *out;
	char gpu[256];
	cudaStream_t stream;
	cudaEvent_t e0, e1;
	cublasLtHandle_t lt;
	void *ws;
	FILE *gemm_f, *attn_f, *mem_f;
};

static int die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("error: calibrate: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

#define CU(x)                                                                           \
	do {                                                                            \
		cudaError_t e_ = (x);                                                   \
		if (e_ != cudaSuccess) {                                                \
			rc = die(1, "rank %d: %s: %s", ev->rank, #x, cudaGetErrorString(e_)); \
			goto out;                                                       \
		}                                                                       \
	} while (0)

static int env_int(const char *const *names, size_t n, int dflt)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(names[i]);
		char *end;
		long x;

		if (!v)
			continue;
		x = strtol(v, &end, 10);
		if (end != v && !*end && x >= 0 && x < 1 << 20)
			return (int)x;
	}
	return dflt;
}

static void ranks(struct env *ev)
{
	static const char *const r[] = {"CVC_CAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					"SLURM_PROCID"};
	static const char *const s[] = {"CVC_CAL_NRANKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					"SLURM_NTASKS"};
	static const char *const lr[] = {"CVC_CAL_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
					 "MPI_LOCALRANKID", "SLURM_LOCALID"};
	static const char *const ls[] = {"CVC_CAL_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
					 "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"};

	ev->rank = env_int(r, 4, 0);
	ev->size = env_int(s, 4, 1);
	ev->local_rank = env_int(lr, 4, ev->rank);
	ev->local_size = env_int(ls, 4, ev->size);
	if (ev->size < 1)
		ev->size = 1;
	if (ev->local_size < 1 || ev->local_size > ev->size)
		ev->local_size = ev->size;
}

static int elem_of(int dt, cudaDataType_t *t, size_t *bytes)
{
	switch (dt) {
	case CVC_HW_BF16:
		*t = CUDA_R_16BF, *bytes = 2;
		return CAL_BF16;
	case CVC_HW_FP16:
		*t = CUDA_R_16F, *bytes = 2;
		return CAL_F16;
	case CVC_HW_FP8:
		*t = CUDA_R_8F_E4M3, *bytes = 1;
		return CAL_FP8;
	default:
		*t = CUDA_R_32F, *bytes = 4;
		return CAL_F32;
	}
}

/* Times fn(arg) over warmup + reps runs: average us, or < 0 on failure. */
typedef int (*run_fn)(struct env *ev, void *arg);
static double timed(struct env *ev, run_fn fn, void *arg)
{
	float ms = 0;

	for (int i = 0; i < ev->warmup; i++)
		if (fn(ev, arg))
			return -1;
	if (cudaEventRecord(ev->e0, ev->stream) != cudaSuccess)
		return -1;
	for (int i = 0; i < ev->reps; i++)
		if (fn(ev, arg))
			return -1;
	if (cudaEventRecord(ev->e1, ev->stream) != cudaSuccess ||
	    cudaEventSynchronize(ev->e1) != cudaSuccess ||
	    cudaEventElapsedTime(&ms, ev->e0, ev->e1) != cudaSuccess)
		return -1;
	return 1000.0 * ms / ev->reps;
}

/* ---- GEMM (cuBLASLt) ------------------------------------------------------------- */

struct gemm {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc, ld;
	cublasLtMatmulHeuristicResult_t heur;
	void *a, *b, *c;
	float alpha, beta;
};

static int gemm_run(struct env *ev, void *arg)
{
	struct gemm *g = arg;

	return cublasLtMatmul(ev->lt, g->op, &g->alpha, g->a, g->la, g->b, g->lb, &g->beta, g->c,
			      g->lc, g->c, g->ld, &g->heur.algo, ev->ws, WORKSPACE,
			      ev->stream) != CUBLAS_STATUS_SUCCESS;
}

static void gemm_release(struct gemm *g)
{
	if (g->op)
		cublasLtMatmulDescDestroy(g->op);
	if (g->la)
		cublasLtMatrixLayoutDestroy(g->la);
	if (g->lb)
		cublasLtMatrixLayoutDestroy(g->lb);
	if (g->lc)
		cublasLtMatrixLayoutDestroy(g->lc);
	if (g->ld)
		cublasLtMatrixLayoutDestroy(g->ld);
	memset(g, 0, sizeof *g);
}

static int layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, uint64_t rows, uint64_t cols,
		  int64_t batch)
{
	int32_t bc = (int32_t)batch;
	int64_t stride = (int64_t)(rows * cols);

	if (cublasLtMatrixLayoutCreate(l, t, rows, cols, (int64_t)rows) != CUBLAS_STATUS_SUCCESS)
		return -1;
	if (batch > 1 &&
	    (cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc,
					      sizeof bc) != CUBLAS_STATUS_SUCCESS ||
	     cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
					      &stride, sizeof stride) != CUBLAS_STATUS_SUCCESS))
		return -1;
	return 0;
}

/*
 * Sets up D[b](m x n) = A[b]^T (k x m stored) x B[b] (k x n), column major:
 * the TN layout every cuBLASLt dtype supports (fp8 requires it).  a, b, c
 * are caller's buffers large enough.  Returns 0, 1 when cuBLASLt has no
 * algorithm for the shape (skipped), -1 on error.
 */
static int gemm_setup(struct env *ev, struct gemm *g, const cvc_cal_shape *s, void *a, void *b,
		      void *c)
{
	cudaDataType_t in, outt;
	cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	cublasLtMatmulPreference_t pref = NULL;
	size_t es;
	uint64_t wsz = WORKSPACE;
	int nres = 0, rc = -1;

	memset(g, 0, sizeof *g);
	elem_of(s->dtype, &in, &es);
	outt = s->dtype == CVC_HW_FP8 ? CUDA_R_16BF : in;
	if (s->dtype == CVC_HW_TF32)
		ct = CUBLAS_COMPUTE_32F_FAST_TF32;
	g->alpha = 1.0f, g->beta = 0.0f;
	g->a = a, g->b = b, g->c = c;
	if (cublasLtMatmulDescCreate(&g->op, ct, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
	    cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb))
		goto out;
	if (layout(&g->la, in, (uint64_t)s->k, (uint64_t)s->m, s->b) ||
	    layout(&g->lb, in, (uint64_t)s->k, (uint64_t)s->n, s->b) ||
	    layout(&g->lc, outt, (uint64_t)s->m, (uint64_t)s->n, s->b) ||
	    layout(&g->ld, outt, (uint64_t)s->m, (uint64_t)s->n, s->b))
		goto out;
	if (cublasLtMatmulPreferenceCreate(&pref) != CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
						 &wsz, sizeof wsz) != CUBLAS_STATUS_SUCCESS)
		goto out;
	if (cublasLtMatmulAlgoGetHeuristic(ev->lt, g->op, g->la, g->lb, g->lc, g->ld, pref, 1,
					   &g->heur, &nres) != CUBLAS_STATUS_SUCCESS ||
	    nres < 1) {
		rc = 1;
		goto out;
	}
	rc = 0;
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (rc)
		gemm_release(g);
	return rc;
}

static size_t gemm_bytes(const cvc_cal_shape *s, size_t *ab, size_t *bb, size_t *cb)
{
	cudaDataType_t t;
	size_t es;

	elem_of(s->dtype, &t, &es);
	*ab = es * (size_t)s->b * (size_t)s->m * (size_t)s->k;
	*bb = es * (size_t)s->b * (size_t)s->k * (size_t)s->n;
	*cb = (s->dtype == CVC_HW_FP8 ? 2 : es) * (size_t)s->b * (size_t)s->m * (size_t)s->n;
	return *ab + *bb + *cb;
}

static void gemm_row(struct env *ev, const cvc_cal_shape *s, double us, const char *origin)
{
	double flops = 2.0 * (double)s->b * (double)s->m * (double)s->n * (double)s->k;

	fprintf(ev->gemm_f, "%s,%lld,%lld,%lld,%lld,%s,%.6g,%.3f,%s\n", ev->gpu, (long long)s->b,
		(long long)s->m, (long long)s->n, (long long)s->k,
		cvc_hw_dtype_name((cvc_hw_dtype)s->dtype), flops / (us * 1e-6), us, origin);
}

/* Measures one GEMM with fresh buffers: us, 0 when skipped, < 0 on error. */
static double gemm_measure(struct env *ev, const cvc_cal_shape *s)
{
	struct gemm g;
	size_t ab, bb, cb;
	void *a = NULL, *b = NULL, *c = NULL;
	cudaDataType_t t;
	size_t es;
	int elem = elem_of(s->dtype, &t, &es), st;
	double us = -1;

	if (s->dtype == CVC_HW_FP4) {
		/* block-scaled 4-bit GEMMs need their scale layouts: not timed
		 * here (the model prices fp4 from bf16 through its measured
		 * share, docs/MODELS.md) */
		fprintf(stderr, "warning: calibrate: gemm %lldx%lldx%lldx%lld fp4: not measured by "
			"this runner: skipped\n", (long long)s->b, (long long)s->m, (long long)s->n,
			(long long)s->k);
		return 0;
	}
	gemm_bytes(s, &ab, &bb, &cb);
	if (cudaMalloc(&a, ab) || cudaMalloc(&b, bb) || cudaMalloc(&c, cb)) {
		fprintf(stderr, "warning: calibrate: gemm %lldx%lldx%lldx%lld: out of GPU memory: "
			"skipped\n", (long long)s->b, (long long)s->m, (long long)s->n,
			(long long)s->k);
		cudaGetLastError();
		us = 0;
		goto out;
	}
	if (cal_fill(a, ab / es, elem, 1, ev->stream) || cal_fill(b, bb / es, elem, 2, ev->stream))
		goto out;
	st = gemm_setup(ev, &g, s, a, b, c);
	if (st) {
		if (st > 0)
			fprintf(stderr, "warning: calibrate: no cuBLASLt algorithm for %s gemm "
				"%lldx%lldx%lldx%lld: skipped\n",
				cvc_hw_dtype_name((cvc_hw_dtype)s->dtype), (long long)s->b,
				(long long)s->m, (long long)s->n, (long long)s->k);
		us = st > 0 ? 0 : -1;
		goto out;
	}
	us = timed(ev, gemm_run, &g);
	gemm_release(&g);
out:
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	return us;
}

/* ---- attention as GEMMs + softmax -------------------------------------------------- */

struct sm {
	void *s, *dp;
	size_t rows, cols;
	int elem, backward;
};

static int sm_run(struct env *ev, void *arg)
{
	struct sm *x = arg;

	return x->backward ? cal_softmax_bwd(x->s, x->dp, x->rows, x->cols, x->elem, ev->stream)
			   : cal_softmax_fwd(x->s, x->rows, x->cols, x->elem, ev->stream);
}

static int attn_measure(struct env *ev, const cvc_cal_shape *s)
{
	cvc_cal_shape gm[4];
	int ng;
	int64_t smb;
	double total = 0, t;
	struct sm x;
	cudaDataType_t dt;
	size_t es, n;

	cvc_cal_attn_parts(s, gm, &ng, &smb);
	for (int i = 0; i < ng; i++) {
		if ((t = gemm_measure(ev, &gm[i])) < 0)
			return -1;
		if (t == 0)
			return 0; /* skipped: logged */
		gemm_row(ev, &gm[i], t, "attention");
		total += t;
	}
	memset(&x, 0, sizeof x);
	x.elem = elem_of(s->dtype, &dt, &es);
	if (x.elem == CAL_FP8)
		x.elem = CAL_BF16, es = 2; /* fp8 GEMMs write bf16 scores */
	x.rows = (size_t)gm[0].b * (size_t)s->m;
	x.cols = (size_t)(s->n > 0 ? s->n : s->m);
	x.backward = s->backward;
	n = x.rows * x.cols;
	if (cudaMalloc(&x.s, n * es)) {
		cudaGetLastError();
		fprintf(stderr, "warning: calibrate: attention scores: out of GPU memory: skipped\n");
		return 0;
	}
	if (s->backward && cudaMalloc(&x.dp, n * es)) {
		cudaGetLastError();
		cudaFree(x.s);
		fprintf(stderr, "warning: calibrate: attention scores: out of GPU memory: skipped\n");
		return 0;
	}
	t = -1;
	if (!cal_fill(x.s, n, x.elem, 3, ev->stream) &&
	    (!x.dp || !cal_fill(x.dp, n, x.elem, 4, ev->stream)))
		t = timed(ev, sm_run, &x);
	cudaFree(x.s);
	cudaFree(x.dp);
	if (t < 0)
		return -1;
	fprintf(ev->attn_f, "%s,%s,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%.3f,%.3f,gemm+softmax\n",
		ev->gpu, cvc_hw_dtype_name((cvc_hw_dtype)s->dtype), (long long)s->b,
		(long long)s->heads, (long long)s->kv_heads, (long long)s->m, (long long)s->n,
		(long long)s->k, s->causal, s->backward, total + t, t);
	return 0;
}

/* ---- memory-bound -------------------------------------------------------------------- */

struct mb {
	void *buf;
	size_t bytes;
	int cls;
};

static int mb_run(struct env *ev, void *arg)
{
	struct mb *m = arg;

	return cal_membound(m->buf, m->bytes, m->cls, ev->stream);
}

static int mem_measure(struct env *ev, const cvc_cal_shape *s)
{
	static const char *const names[] = {"elementwise", "norm", "reduction", "copy", "gather",
					    "optimizer"};
	struct mb m = {NULL, (size_t)s->bytes, s->sub};
	/* room for a whole 4096-wide row pair at the smallest sizes */
	size_t alloc = m.bytes < (1u << 20) ? (1u << 20) : m.bytes + 4096;
	double us;

	if (cudaMalloc(&m.buf, alloc)) {
		cudaGetLastError();
		fprintf(stderr, "warning: calibrate: membound %lld bytes: out of GPU memory\n",
			(long long)s->bytes);
		return 0;
	}
	us = cal_fill(m.buf, alloc / 4, CAL_F32, 5, ev->stream) ? -1 : timed(ev, mb_run, &m);
	cudaFree(m.buf);
	if (us < 0)
		return -1;
	fprintf(ev->mem_f, "%s,%s,%lld,%.3f,%.2f\n", ev->gpu,
		s->sub >= 0 && s->sub < 6 ? names[s->sub] : "?", (long long)s->bytes, us,
		(double)s->bytes / (us * 1e3));
	return 0;
}

/* ---- collectives (NCCL) ------------------------------------------------------------------ */

static const char *nccl_test_name(int c)
{
	switch (c) {
	case CVC_MODEL_ALLREDUCE:
		return "all_reduce";
	case CVC_MODEL_ALLGATHER:
		return "all_gather";
	case CVC_MODEL_REDUCESCATTER:
		return "reduce_scatter";
	case CVC_MODEL_ALLTOALL:
		return "alltoall";
	case CVC_MODEL_BROADCAST:
		return "broadcast";
	case CVC_MODEL_REDUCE:
		return "reduce";
	default:
		return "sendrecv";
	}
}

/* NCCL id exchange through a file in the (shared) output directory. */
static int share_id(struct env *ev, ncclUniqueId *id)
{
	char path[4096], tmp[4200];
	FILE *f;

	snprintf(path, sizeof path, "%s/nccl.id", ev->out);
	if (ev->rank == 0) {
		if (ncclGetUniqueId(id) != ncclSuccess)
			return die(1, "ncclGetUniqueId failed");
		snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
		/* lint-out: the ranks' NCCL id, published by rename into the
		 * --out folder the ranks share (the GPU runner, its own program) */
		if (!(f = fopen(tmp, "wb")) || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) ||
		    rename(tmp, path)) /* lint-out: see above */
			return die(1, "'%s': cannot write: %s", path, strerror(errno));
		return 0;
	}
	for (int waited = 0; waited < ID_WAIT_S * 10; waited++) {
		if ((f = fopen(path, "rb"))) {
			size_t got = fread(id, sizeof *id, 1, f);

			fclose(f);
			if (got == 1)
				return 0;
		}
		usleep(100000);
	}
	return die(1, "rank %d: '%s' did not appear in %d s (is --out on a shared filesystem?)",
		   ev->rank, path, ID_WAIT_S);
}

struct coll {
	ncclComm_t comm;
	int c, g, grank;
	size_t bytes;
	void *send, *recv;
};

static int coll_run(struct env *ev, void *arg)
{
	struct coll *x = arg;
	size_t n = x->bytes / 2; /* bf16 elements */
	ncclResult_t r = ncclSuccess;

	switch (x->c) {
	case CVC_MODEL_ALLREDUCE:
		r = ncclAllReduce(x->send, x->recv, n, ncclBfloat16, ncclSum, x->comm, ev->stream);
		break;
	case CVC_MODEL_ALLGATHER:
		r = ncclAllGather(x->send, x->recv, n / (size_t)x->g, ncclBfloat16, x->comm,
				  ev->stream);
		break;
	case CVC_MODEL_REDUCESCATTER:
		r = ncclReduceScatter(x->send, x->recv, n / (size_t)x->g, ncclBfloat16, ncclSum,
				      x->comm, ev->stream);
		break;
	case CVC_MODEL_ALLTOALL: {
		size_t chunk = n / (size_t)x->g;

		ncclGroupStart();
		for (int p = 0; p < x->g; p++) {
			ncclSend((char *)x->send + 2 * chunk * (size_t)p, chunk, ncclBfloat16, p,
				 x->comm, ev->stream);
			ncclRecv((char *)x->recv + 2 * chunk * (size_t)p, chunk, ncclBfloat16, p,
				 x->comm, ev->stream);
		}
		r = ncclGroupEnd();
		break;
	}
	case CVC_MODEL_BROADCAST:
		r = ncclBroadcast(x->send, x->recv, n, ncclBfloat16, 0, x->comm, ev->stream);
		break;
	case CVC_MODEL_REDUCE:
		r = ncclReduce(x->send, x->recv, n, ncclBfloat16, ncclSum, 0, x->comm, ev->stream);
		break;
	default: { /* sendrecv: a ring, as nccl-tests' sendrecv_perf */
		int to = (x->grank + 1) % x->g, from = (x->grank + x->g - 1) % x->g;

		ncclGroupStart();
		ncclSend(x->send, n, ncclBfloat16, to, x->comm, ev->stream);
		ncclRecv(x->recv, n, ncclBfloat16, from, x->comm, ev->stream);
		r = ncclGroupEnd();
		break;
	}
	}
	return r != ncclSuccess;
}

/* Group membership: per_node ranks on each of the first nodes. */
static int member(const struct env *ev, int group, int per_node, int *grank)
{
	int node = ev->rank / ev->local_size, lr = ev->rank % ev->local_size;
	int nodes = (group + per_node - 1) / per_node;

	*grank = node * per_node + lr;
	return lr < per_node && node < nodes && *grank < group;
}

static int colls(struct env *ev, const cvc_cal_shape *v, size_t n)
{
	ncclUniqueId id;
	ncclComm_t world = NULL, sub = NULL;
	int cur_g = 0, cur_p = 0, in = 0, grank = 0, rc = 0, ncoll = 0;
	size_t maxb = 0;
	void *sbuf = NULL, *rbuf = NULL;

	for (size_t i = 0; i < n; i++)
		if (v[i].kind == CVC_CAL_COLL) {
			ncoll++;
			if ((size_t)v[i].bytes > maxb)
				maxb = (size_t)v[i].bytes;
		}
	if (!ncoll || ev->size < 2)
		return 0;
	if ((rc = share_id(ev, &id)))
		return rc;
	if (ncclCommInitRank(&world, ev->size, id, ev->rank) != ncclSuccess)
		return die(1, "rank %d: ncclCommInitRank failed", ev->rank);
	if (cudaMalloc(&sbuf, maxb + 4096) || cudaMalloc(&rbuf, maxb + 4096)) {
		rc = die(1, "rank %d: no GPU memory for %zu-byte collective buffers", ev->rank, maxb);
		goto out;
	}
	cal_fill(sbuf, (maxb + 4096) / 2, CAL_BF16, 7, ev->stream);
	/* the plan lists collectives in one order on every rank: every rank
	 * joins every split, in the same order */
	for (size_t i = 0; i < n; i++) {
		const cvc_cal_shape *s = &v[i];
		struct coll x;
		double us;
		char path[4096];
		FILE *f;

		if (s->kind != CVC_CAL_COLL)
			continue;
		if (s->group > ev->size || s->per_node > ev->local_size) {
			if (ev->rank == 0)
				fprintf(stderr, "warning: calibrate: %s over %d ranks (%d per node) "
					"needs more GPUs than this job: skipped\n",
					nccl_test_name(s->sub), s->group, s->per_node);
			continue;
		}
		if (s->group != cur_g || s->per_node != cur_p) {
			if (sub)
				ncclCommDestroy(sub);
			sub = NULL;
			in = member(ev, s->group, s->per_node, &grank);
			if (ncclCommSplit(world, in ? 0 : NCCL_SPLIT_NOCOLOR, ev->rank, &sub, NULL) !=
			    ncclSuccess) {
				rc = die(1, "rank %d: ncclCommSplit failed", ev->rank);
				goto out;
			}
			cur_g = s->group, cur_p = s->per_node;
		}
		if (!in)
			continue;
		memset(&x, 0, sizeof x);
		x.comm = sub, x.c = s->sub, x.g = s->group, x.grank = grank;
		x.bytes = (size_t)s->bytes / (2 * (size_t)s->group) * (2 * (size_t)s->group);
		if (!x.bytes)
			x.bytes = 2 * (size_t)s->group;
		x.send = sbuf, x.recv = rbuf;
		if ((us = timed(ev, coll_run, &x)) < 0) {
			rc = die(1, "rank %d: %s of %zu bytes failed", ev->rank,
				 nccl_test_name(s->sub), x.bytes);
			goto out;
		}
		if (grank != 0)
			continue;
		snprintf(path, sizeof path, "%s/nccl_%s_g%d_pn%d.txt", ev->out,
			 nccl_test_name(s->sub), s->group, s->per_node);
		/* lint-out: rank 0 of each group appends its rows to a log in
		 * the --out folder; cvc calibrate empties the folder first */
		f = fopen(path, "a");
		if (!f) {
			rc = die(1, "'%s': cannot write: %s", path, strerror(errno));
			goto out;
		}
		if (ftell(f) == 0) {
			/* nccl-tests' header: the reader takes the op from
			 * "<op>_perf", ranks and hosts from the Rank lines */
			fprintf(f, "# cvc calibrate: %s_perf -b 0 -e 0 -g 1\n#\n# Using devices\n",
				nccl_test_name(s->sub));
			for (int r = 0; r < s->group; r++)
				fprintf(f, "#  Rank %2d Group  0 Pid 0 on node%04d device %2d [0x00] %s\n",
					r, r / s->per_node, r % s->per_node, ev->gpu);
			fprintf(f, "#\n#       size         count      type   redop    root     time   "
				"algbw   busbw #wrong     time   algbw   busbw #wrong\n");
		}
		{
			double algbw = (double)x.bytes / (us * 1e3);
			double bus = algbw * cvc_model_busbw_factor((cvc_model_coll)s->sub, s->group);

			fprintf(f, "%12zu %12zu  bfloat16     sum      -1 %8.2f %7.2f %7.2f      0 "
				"%8.2f %7.2f %7.2f      0\n", x.bytes, x.bytes / 2, us, algbw, bus, us,
				algbw, bus);
		}
		if (fclose(f)) {
			rc = die(1, "'%s': write error", path);
			goto out;
		}
	}
out:
	if (sub)
		ncclCommDestroy(sub);
	if (world)
		ncclCommDestroy(world);
	cudaFree(sbuf);
	cudaFree(rbuf);
	return rc;
}

/* ---- main ------------------------------------------------------------------------------ */

static FILE *open_out(const struct env *ev, const char *name, const char *header)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s.r%d.csv", ev->out, name, ev->rank);
	/* lint-out: a rank's table in the --out folder cvc calibrate empties
	 * first, under a name of cvc's own */
	if (!(f = fopen(path, "w")))
		return NULL;
	fputs(header, f);
	return f;
}

int main(int argc, char **argv)
{
	struct env env, *ev = &env;
	const char *plan = NULL;
	cvc_cal_shape *v = NULL;
	size_t n = 0;
	char err[1024];
	struct cudaDeviceProp prop;
	int ndev = 0, rc = 0, mine = 0;
	cudaError_t ce;
	time_t t0 = time(NULL);

	memset(ev, 0, sizeof *ev);
	ev->warmup = 5, ev->reps = 20;
	for (int i = 1; i < argc; i++) {
		char *end = NULL;

		if (i + 1 < argc && strcmp(argv[i], "--plan") == 0)
			plan = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--out") == 0)
			ev->out = argv[++i];
		else if (i + 1 < argc && strcmp(argv[i], "--warmup") == 0)
			ev->warmup = (int)strtol(argv[++i], &end, 10);
		else if (i + 1 < argc && strcmp(argv[i], "--reps") == 0)
			ev->reps = (int)strtol(argv[++i], &end, 10);
		else
			return die(2, "usage: cvc_calibrate_run --plan FILE --out DIR [--warmup N] "
				   "[--reps N]");
		if (end && (*end || ev->warmup < 0 || ev->reps < 1))
			return die(2, "expected --warmup >= 0 and --reps >= 1");
	}
	if (!plan || !ev->out)
		return die(2, "usage: cvc_calibrate_run --plan FILE --out DIR [--warmup N] [--reps N]");
	ranks(ev);
	if ((ce = cudaGetDeviceCount(&ndev)) != cudaSuccess || ndev < 1)
		return die(2, "no GPU here: %s", ce != cudaSuccess ? cudaGetErrorString(ce)
								    : "no CUDA device");
	if (cvc_cal_plan_read_csv(plan, &v, &n, err, sizeof err))
		return die(2, "%s", err);
	CU(cudaSetDevice(ev->local_rank % ndev));
	CU(cudaGetDeviceProperties(&prop, ev->local_rank % ndev));
	snprintf(ev->gpu, sizeof ev->gpu, "%s", prop.name);
	for (char *p = ev->gpu; *p; p++)
		if (*p == ',')
			*p = ' '; /* a CSV field */
	CU(cudaStreamCreateWithFlags(&ev->stream, cudaStreamNonBlocking));
	CU(cudaEventCreate(&ev->e0));
	CU(cudaEventCreate(&ev->e1));
	CU(cudaMalloc(&ev->ws, WORKSPACE));
	if (cublasLtCreate(&ev->lt) != CUBLAS_STATUS_SUCCESS) {
		rc = die(1, "rank %d: cublasLtCreate failed", ev->rank);
		goto out;
	}
	ev->gemm_f = open_out(ev, "gemm", cvc_cal_result_header(CVC_CAL_GEMM));
	ev->attn_f = open_out(ev, "attention", cvc_cal_result_header(CVC_CAL_ATTN));
	ev->mem_f = open_out(ev, "membound", cvc_cal_result_header(CVC_CAL_MEM));
	if (!ev->gemm_f || !ev->attn_f || !ev->mem_f) {
		rc = die(1, "'%s': cannot write the result tables: %s", ev->out, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const cvc_cal_shape *s = &v[i];
		double us;

		if (s->kind == CVC_CAL_COLL || (int)((size_t)mine++ % (size_t)ev->size) != ev->rank)
			continue;
		switch (s->kind) {
		case CVC_CAL_GEMM:
			if ((us = gemm_measure(ev, s)) < 0) {
				rc = die(1, "rank %d: gemm failed", ev->rank);
				goto out;
			}
			if (us > 0)
				gemm_row(ev, s, us, "plan");
			break;
		case CVC_CAL_ATTN:
			if (attn_measure(ev, s)) {
				rc = die(1, "rank %d: attention failed", ev->rank);
				goto out;
			}
			break;
		default:
			if (mem_measure(ev, s)) {
				rc = die(1, "rank %d: membound failed", ev->rank);
				goto out;
			}
			break;
		}
	}
	rc = colls(ev, v, n);
	if (!rc && ev->rank == 0)
		fprintf(stderr, "calibrate: rank 0 of %d: %zu shapes measured in %lld s on %s\n",
			ev->size, n, (long long)(time(NULL) - t0), ev->gpu);
out:
	if (ev->gemm_f && fclose(ev->gemm_f) && !rc)
		rc = die(1, "gemm table: write error");
	if (ev->attn_f)
		fclose(ev->attn_f);
	if (ev->mem_f)
		fclose(ev->mem_f);
	if (ev->lt)
		cublasLtDestroy(ev->lt);
	cudaFree(ev->ws);
	free(v);
	return rc;
}
