/*
 * bench_project.c - projector throughput: scenarios evaluated per second on
 * one core, for N = 10^3 .. 10^6 (the cost must grow linearly), the shipped
 * default study, and a named baseline in the same run:
 *
 *   baseline "6ND": the textbook estimate tokens/s = 0.4 * gpus * peak /
 *   (6 * params) per scenario, over scenario structs already in memory -
 *   the floor any closed-form projector pays per scenario.
 *
 * The sweep is a generated study (6 model shapes x seq x batch x micro-batch
 * x ZeRO x recompute x tp x pp x GPU x compute scale x overlap x GPU count),
 * invalid layouts skipped, each valid scenario evaluated together with the
 * same layout at half the GPUs (marginal tokens/s), i.e. two evaluations
 * per scenario.  GPU count is the innermost axis, as in real sweeps.
 *
 * Usage: bench_project [MAX_N]   (default 1000000)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cvc/cvc_project.h"

/* GPU count is the last key of the last section: the innermost axis */
static const char sweep[] =
	"name: bench\n"
	"model:\n"
	"  - {layers: 32, hidden: 4096, heads: 32, ffn_type: swiglu, vocab: 32000, seq: [2048, 4096, 8192]}\n"
	"  - {layers: 40, hidden: 5120, heads: 40, ffn_type: swiglu, vocab: 32000, seq: [2048, 4096, 8192]}\n"
	"  - {layers: 80, hidden: 8192, heads: 64, kv_heads: 8, ffn_type: swiglu, seq: [2048, 4096, 8192]}\n"
	"  - {layers: 96, hidden: 12288, heads: 96, seq: [2048, 4096, 8192]}\n"
	"  - {layers: 126, hidden: 16384, heads: 128, kv_heads: 8, ffn_type: swiglu, seq: [2048, 4096, 8192]}\n"
	"  - {layers: 128, hidden: 25600, heads: 160, seq: [2048, 4096, 8192]}\n"
	"training:\n"
	"  global_batch: [1024, 2048, 4096, 8192]\n"
	"  micro_batch: [1, 2]\n"
	"  zero: [0, 1, 3]\n"
	"  recompute: [selective, full]\n"
	"parallelism: {tp: [1, 2, 4, 8], pp: [1, 2, 4, 8]}\n"
	"comm: {dp_overlap: [true, false]}\n"
	"hardware:\n"
	"  gpu: [A100-SXM-80GB, H100-SXM, B200]\n"
	"  scale: {compute: [1, 2, 4]}\n"
	"  gpus: {from: 8, to: 65536, mul: 2}\n";

struct counter {
	uint64_t n, limit;
	double sink;
};

static int count_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct counter *c = user;

	(void)sc;
	c->sink += r->tokens_per_s;
	return ++c->n >= c->limit;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct keep {
	cvc_proj_scenario *v;
	size_t n, cap;
};

static int keep_cb(void *user, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct keep *k = user;

	(void)r;
	k->v[k->n++] = *sc;
	return k->n >= k->cap;
}

static double peak_of(const char *gpu)
{
	/* dense bf16 datasheet peaks: enough for a baseline's arithmetic */
	if (strstr(gpu, "A100"))
		return 312e12;
	if (strstr(gpu, "H100"))
		return 989e12;
	return 2250e12;
}

int main(int argc, char **argv)
{
	uint64_t max_n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	cvc_proj_study *st = NULL;
	cvc_proj_ctx *ctx = NULL;
	int ret = 1;
	double ns_min = INFINITY, ns_max = 0;

	if (cvc_proj_study_parse("bench.yaml", sweep, strlen(sweep), &st)) {
		fprintf(stderr, "bench: %s\n", cvc_proj_study_errmsg(st));
		goto out;
	}
	if (cvc_proj_ctx_new(NULL, &ctx)) {
		fprintf(stderr, "bench: %s\n", cvc_proj_ctx_errmsg(ctx));
		goto out;
	}
	/* the sweep without intervals (what --intervals off runs); the shipped
	 * study below both ways */
	cvc_proj_ctx_set_intervals(ctx, 0);
	printf("# projector benchmark, one core; study expands to %.0f points\n",
	       cvc_proj_study_size(st));
	printf("%-10s %10s %10s %14s\n", "what", "N", "seconds", "ns/scenario");
	for (uint64_t n = 1000; n <= max_n; n *= 10) {
		struct counter c = {0, n, 0};
		double t0 = now(), dt, ns;

		cvc_proj_study_run(st, ctx, CVC_PROJ_VALID_ONLY, count_cb, &c, NULL);
		dt = now() - t0;
		ns = 1e9 * dt / (double)c.n;
		if (ns < ns_min)
			ns_min = ns;
		if (ns > ns_max)
			ns_max = ns;
		printf("%-10s %10llu %10.4f %14.1f\n", "projector", (unsigned long long)c.n, dt, ns);
		if (c.n < n) {
			printf("# the study ran out at %llu scenarios\n", (unsigned long long)c.n);
			break;
		}
	}
	printf("# linearity: ns/scenario max/min = %.2f\n", ns_max / ns_min);

	/* baseline: 6ND over 10^4 scenarios already in memory, cycled to N */
	{
		struct keep k = {NULL, 0, 10000};
		double sink = 0;

		k.v = malloc(k.cap * sizeof *k.v);
		if (!k.v)
			goto out;
		cvc_proj_study_run(st, ctx, CVC_PROJ_VALID_ONLY | CVC_PROJ_NO_MARGINAL, keep_cb, &k,
				   NULL);
		for (uint64_t n = 1000; n <= max_n && k.n; n *= 10) {
			double t0 = now(), dt;

			for (uint64_t i = 0; i < n; i++) {
				const cvc_proj_scenario *s = &k.v[i % k.n];
				double params = 12 * s->layers * s->hidden * s->hidden +
						s->vocab * s->hidden;

				sink += 0.4 * s->gpus * peak_of(s->gpu) / (6 * params);
			}
			dt = now() - t0;
			printf("%-10s %10llu %10.4f %14.1f\n", "6ND", (unsigned long long)n, dt,
			       1e9 * dt / (double)n);
		}
		printf("# (baseline checksum %.3g)\n", sink);
		free(k.v);
	}

	/* the shipped default study, marginal comparison included, without and
	 * with intervals (which add the five upgrade-gain evaluations) */
	for (int on = 0; on <= 1; on++) {
		cvc_proj_study *def = NULL;
		struct counter c = {0, UINT64_MAX, 0};
		double t0, dt;

		if (cvc_proj_study_default(&def)) {
			fprintf(stderr, "bench: %s\n", cvc_proj_study_errmsg(def));
			cvc_proj_study_free(def);
			goto out;
		}
		cvc_proj_ctx_set_intervals(ctx, on);
		t0 = now();
		cvc_proj_study_run(def, ctx, 0, count_cb, &c, NULL);
		dt = now() - t0;
		printf("%-10s %10llu %10.4f %14.1f\n", on ? "default+iv" : "default",
		       (unsigned long long)c.n, dt, 1e9 * dt / (double)c.n);
		cvc_proj_study_free(def);
	}
	ret = 0;
out:
	cvc_proj_study_free(st);
	cvc_proj_ctx_free(ctx);
	return ret;
}
