/*
 * coldoc.c - what each column of the report's tables means (the CSV/JSON
 * of `cvc report --csv-dir` and the page's data): unit and definition per
 * (table, column), "*" for a column every table of the report uses the same
 * way.  `scenarios` is the projection file's columns: the projector's
 * dictionary (cvc_proj_column_doc).  docs/COLUMNS.md is generated from
 * these entries (`cvc help columns`); a table column without one fails
 * unit.columns.
 */
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_project.h"
#include "rep_int.h"

struct repdoc {
	const char *table, *name, *unit, *def;
};

static const struct repdoc docs[] = {
	/* the same everywhere in the report */
	{"*", "model", "text", "model name"},
	{"*", "hw", "text", "hardware: the GPU plus the projector's scale factors that are not 1"},
	{"*", "gpus", "GPUs", "GPU count"},
	{"*", "layout", "text", "tp pp dp mb, with vpp/cp/ep/zero when used, rc: the recompute "
				"policy, tp-overlap, grid=RxCxD, clusters=N, H=N local SGD"},
	{"*", "scenario", "count", "the scenario's index in the projection"},
	{"*", "params_b", "B parameters", "model size, billions of parameters"},
	{"*", "run", "text", "run name"},
	{"*", "rank", "count", "rank"},
	{"*", "device", "count", "GPU index on its host"},
	/* first screen */
	{"headline", "generation", "count", "hardware generation, 1 = oldest (table hardware)"},
	{"headline", "tokens_per_s_per_gpu", "tokens/s", "throughput per GPU of the best layout"},
	{"headline", "tokens_per_s", "tokens/s", "throughput of the best layout"},
	{"headline", "comm_share", "fraction of the step", "comm_s / step_s"},
	{"headline", "comm_share_lo", "fraction of the step", "lower end of its 90% interval"},
	{"headline", "comm_share_hi", "fraction of the step", "upper end of its 90% interval"},
	{"headline", "exposed_share", "fraction of the step", "exposed_s / step_s"},
	{"headline", "exposed_share_lo", "fraction of the step", "lower end of its 90% interval"},
	{"headline", "exposed_share_hi", "fraction of the step", "upper end of its 90% interval"},
	{"headline", "top_exposed_type", "text", "communication type with the most exposed time"},
	{"headline", "top_exposed_frac", "fraction", "its part of the typed exposed time"},
	{"headline", "next_hw", "text", "the next hardware generation at this GPU count"},
	{"headline", "next_comm_share_change", "fraction of the step", "its comm_share minus this"},
	{"headline", "next_exposed_share_change", "fraction of the step",
	 "its exposed_share minus this"},
	{"headline", "next_tokens_per_gpu_ratio", "x", "its tokens/s per GPU over this"},
	{"headline", "scaling_efficiency", "fraction", "tokens/s per GPU over that at the smallest "
						       "GPU count of this hardware and model; empty when "
						       "this is its only GPU count (nothing to scale from)"},
	{"headline", "bubble_share", "fraction of the step", "bubble_s / step_s"},
	{"headline", "hbm_headroom", "fraction of HBM", "(hbm_gb - mem_gb) / hbm_gb"},
	{"headline", "flags", "text", "why the layout is far from the best: scaling efficiency "
				      "< 50%, bubble > 25% of the step, host-bound (host_share > "
				      "25%), < 10% HBM left"},
	{"headline", "host_share", "fraction of the step", "host_s / step_s: the GPU waiting on the "
							   "host's kernel launches (in compute_s)"},
	{"hardware", "generation", "count", "1 = oldest: bf16 peak, then HBM bandwidth, any "
					    "dtype's peak, HBM capacity"},
	{"hardware", "bf16_tflops", "TFLOP/s", "dense bf16 peak, scale_compute applied"},
	{"hardware", "hbm_gbps", "GB/s", "HBM bandwidth, scale_hbm_bw applied"},
	{"findings", "from_hw", "text", "oldest hardware at this GPU count (empty: the model has no "
					 "best layout here and the finding says why)"},
	{"findings", "to_hw", "text", "newest hardware at this GPU count (empty as from_hw)"},
	{"findings", "flagged", "count", "best layouts far from the best at this GPU count"},
	{"findings", "finding", "text", "the sentence the first screen shows"},
	{"advice", "tokens_per_s", "tokens/s", "throughput of the advised layout"},
	{"advice", "comm_share", "fraction of the step", "comm_s / step_s"},
	{"advice", "comm_share_lo", "fraction of the step", "lower end of its 90% interval"},
	{"advice", "comm_share_hi", "fraction of the step", "upper end of its 90% interval"},
	{"advice", "exposed_share", "fraction of the step", "exposed_s / step_s"},
	{"advice", "exposed_share_lo", "fraction of the step", "lower end of its 90% interval"},
	{"advice", "exposed_share_hi", "fraction of the step", "upper end of its 90% interval"},
	{"advice", "top_exposed_type", "text", "communication type with the most exposed time"},
	{"advice", "flags", "text", "the advised layout's flags (empty unless every count has one)"},
	{"advice", "beyond_gpus", "GPUs", "the next larger GPU count of this hardware"},
	{"advice", "beyond_flags", "text", "what flags it"},
	{"advice", "recommended", "0/1", "1: the model's recommendation (most tokens/s unflagged)"},
	{"advice", "advice", "text", "the sentence the first screen ends with"},
	{"exposed_by_type", "exposed_<t>_s", "s", "exposed communication of type <t>"},
	{"exposed_by_type", "exposed_s", "s", "exposed communication"},
	{"exposed_by_type", "step_s", "s", "step time"},
	{"exposed_by_type", "exposed_share", "fraction of the step", "exposed_s / step_s"},
	{"exposed_by_type", "exposed_share_lo", "fraction of the step", "lower end of its 90% "
									"interval (whisker)"},
	{"exposed_by_type", "exposed_share_hi", "fraction of the step", "upper end of its 90% "
									"interval (whisker)"},
	{"memory", "mem_params_gb", "GB", "weights, gradients, optimizer states per GPU"},
	{"memory", "mem_act_gb", "GB", "activations per GPU"},
	{"memory", "mem_buf_gb", "GB", "buffers per GPU"},
	{"memory", "mem_gb", "GB", "peak memory per GPU"},
	{"memory", "hbm_gb", "GB", "usable HBM per GPU"},
	{"sensitivity", "gain_compute", "x", "step time over that with 2x compute"},
	{"sensitivity", "gain_hbm_bw", "x", "step time over that with 2x HBM bandwidth"},
	{"sensitivity", "gain_hbm_cap", "x", "step time over that with 2x HBM capacity"},
	{"sensitivity", "gain_intra_bw", "x", "step time over that with 2x NVLink bandwidth"},
	{"sensitivity", "gain_inter_bw", "x", "step time over that with 2x network bandwidth"},
	/* projection */
	{"proj_time", "compute_only_s", "s", "compute minus the communication hidden under it and "
					      "the host wait (host_s)"},
	{"proj_time", "hidden_s", "s", "communication under compute"},
	{"proj_time", "exposed_s", "s", "communication on the critical path"},
	{"proj_time", "bubble_s", "s", "pipeline bubble"},
	{"proj_time", "step_s", "s", "step time (the five add up to it)"},
	{"proj_time", "host_s", "s", "the GPU waiting on the host's kernel launches (the projection's "
				     "host_s, part of its compute_s; 0 without the column)"},
	{"best_layout", "tokens_per_s", "tokens/s", "throughput"},
	{"best_layout", "tokens_per_s_lo", "tokens/s", "lower end of its 90% interval"},
	{"best_layout", "tokens_per_s_hi", "tokens/s", "upper end of its 90% interval"},
	{"best_layout", "step_s", "s", "step time"},
	{"best_layout", "mfu", "fraction", "model FLOPs utilisation"},
	{"best_layout", "comm_share", "fraction of the step", "comm_s / step_s"},
	{"best_layout", "exposed_share", "fraction of the step", "exposed_s / step_s"},
	{"best_layout", "mem_gb", "GB", "peak memory per GPU"},
	{"best_layout", "warnings", "text", "the projector's warnings of the layout"},
	{"scaling", "tokens_per_s", "tokens/s", "the best layout's throughput"},
	{"scaling", "ideal_tokens_per_s", "tokens/s", "linear from the smallest GPU count"},
	{"scaling", "scaling_efficiency", "fraction", "tokens_per_s / ideal_tokens_per_s; empty for "
						      "a hardware and model at one GPU count"},
	{"exposed_heatmap", "gpus=<N>", "fraction of the step", "exposed share of the best "
								  "layout at N GPUs"},
	{"proj_warnings", "warning", "text", "the warning, its own (first) figure taken out; later figures are its constants and stay"},
	{"proj_warnings", "scenarios", "count", "priced scenarios carrying it"},
	{"proj_warnings", "share_pct", "%", "of that hardware's priced scenarios"},
	{"proj_warnings", "worst", "text", "the largest of its own figure over the scenarios (x past the range, % of the time or of HBM)"},
	/* provenance */
	{"provenance", "item", "text", "what: projection, cvc version, database, models, catalog"},
	{"provenance", "value", "text", "its value as the projection recorded it"},
	{"model_origins", "gpu", "text", "GPU the projection priced"},
	{"model_origins", "kind", "text", "gemm, attention, membound, collective"},
	{"model_origins", "op", "text", "dtype, class or collective"},
	{"model_origins", "model_id", "count", "fitted model that priced it (empty: defaults)"},
	{"model_origins", "priced", "count", "times it priced"},
	{"model_origins", "origin", "text", "where the figures come from"},
	{"provenance_models", "id", "count", "model id in the database that priced it"},
	{"provenance_models", "kind", "text", "gemm, membound, collective"},
	{"provenance_models", "gpu", "text", "GPU fitted"},
	{"provenance_models", "system", "text", "system fitted (collectives)"},
	{"provenance_models", "op", "text", "dtype, class or collective"},
	{"provenance_models", "nranks", "count", "group size fitted"},
	{"provenance_models", "gpus_per_node", "GPUs", "GPUs per node of the fit"},
	{"provenance_models", "n_points", "count", "rows fitted"},
	{"provenance_models", "r2", "ratio", "R^2 on log time"},
	{"provenance_models", "mape_pct", "%", "in-sample mean absolute percentage error"},
	{"provenance_models", "extrap_mape_pct", "%", "fit on the smaller half of the sizes, "
							"error on the rest"},
	{"provenance_models", "domain_min", "FLOP or bytes", "smallest size fitted"},
	{"provenance_models", "domain_max", "FLOP or bytes", "largest size fitted"},
	{"provenance_models", "domain_unit", "text", "flop or bytes"},
	{"provenance_models", "source", "text", "file the rows came from"},
	{"provenance_catalog", "name", "text", "catalog entry"},
	{"provenance_catalog", "kind", "text", "gpu or system"},
	{"provenance_catalog", "base", "text", "a system's GPU"},
	{"provenance_catalog", "source", "text", "where its figures come from"},
	/* trace */
	{"ranks", "kernels", "count", "kernels of the device"},
	{"ranks", "comm_kernels", "count", "communication kernels"},
	{"ranks", "span_ms", "ms", "first activity start to last end"},
	{"ranks", "busy_ms", "ms", "union of all activities"},
	{"ranks", "compute_ms", "ms", "union of compute activities"},
	{"ranks", "comm_ms", "ms", "union of communication kernels"},
	{"ranks", "compute_only_ms", "ms", "compute minus hidden communication"},
	{"ranks", "hidden_ms", "ms", "communication under compute"},
	{"ranks", "exposed_ms", "ms", "communication not under compute"},
	{"ranks", "copy_ms", "ms", "copies and memsets while no kernel runs: busy minus the "
	 "kernels' union"},
	{"ranks", "idle_ms", "ms", "span minus busy"},
	{"ranks", "overlap_pct", "%", "100 hidden / comm"},
	{"ranks", "comm_share", "fraction of the span", "comm_ms / span_ms: communication, hidden "
	 "or not, as a part of the traced step (the projector's comm_share of its step)"},
	{"ranks", "exposed_share", "fraction of the span", "exposed_ms / span_ms"},
	{"ranks", "host_wait_ms", "ms", "idle gaps the host caused: their work launched after "
					"the gap began (analyze --idle)"},
	{"ranks", "kernel_wait_ms", "ms", "other idle gaps under 20 us: launch latency"},
	{"ranks", "other_idle_ms", "ms", "the rest of idle_ms: queued work that still waited"},
	{"ranks", "unlaunched_gaps", "count", "gaps ended by work without launch times"},
	{"classes", "class", "text", "operator class (the classifier's)"},
	{"classes", "is_comm", "0/1", "1: a communication class"},
	{"classes", "kernels", "count", "kernels of the class"},
	{"classes", "time_ms", "ms", "union of the class's kernels per device, summed"},
	{"classes", "mean_per_rank_ms", "ms", "time_ms over the run's devices"},
	{"classes", "sum_ms", "ms", "plain sum of durations"},
	{"top_kernels", "kernel", "text", "kernel name (cut at 300 bytes)"},
	{"top_kernels", "class", "text", "its class"},
	{"top_kernels", "is_comm", "0/1", "1: communication"},
	{"top_kernels", "count", "count", "launches"},
	{"top_kernels", "total_ms", "ms", "summed duration"},
	{"top_kernels", "mean_us", "us", "mean duration"},
	{"top_kernels", "share_pct", "%", "of the run's kernel time"},
	{"collectives", "collective", "text", "allreduce, allgather, ..."},
	{"collectives", "bytes", "bytes", "message size, nccl-tests convention"},
	{"collectives", "group_size", "GPUs", "ranks of the collective"},
	{"collectives", "count", "count", "calls"},
	{"collectives", "mean_us", "us", "mean duration"},
	{"collectives", "algbw_gbps", "GB/s", "bytes / time (GB = 1e9 B)"},
	{"collectives", "busbw_gbps", "GB/s", "algbw times the collective's bus factor"},
	{"collective_model", "model_id", "count", "fitted model drawn"},
	{"collective_model", "collective", "text", "its collective"},
	{"collective_model", "gpu", "text", "its GPU"},
	{"collective_model", "nranks", "count", "its group size"},
	{"collective_model", "bytes", "bytes", "message size"},
	{"collective_model", "time_us", "us", "predicted time"},
	{"collective_model", "busbw_gbps", "GB/s", "predicted bus bandwidth"},
	{"skew", "start_offset_ms", "ms", "first activity after the run's earliest"},
	{"skew", "busy_ms", "ms", "busy time"},
	{"skew", "busy_vs_mean_pct", "%", "busy against the run's mean"},
	{"skew", "exposed_ms", "ms", "exposed communication"},
	{"skew", "exposed_vs_mean_pct", "%", "exposed against the run's mean"},
	{"skew", "idle_ms", "ms", "idle time"},
	{"skew_summary", "devices", "count", "devices of the run"},
	{"skew_summary", "busy_min_ms", "ms", "least busy device"},
	{"skew_summary", "busy_mean_ms", "ms", "mean busy time"},
	{"skew_summary", "busy_max_ms", "ms", "busiest device"},
	{"skew_summary", "busy_max_over_min", "x", "busy_max_ms / busy_min_ms"},
	{"skew_summary", "busiest_rank", "count", "rank of the device with the most busy time "
						"(communication kernels count as busy, waiting in them "
						"too: the rank the others wait on is not always it)"},
	{"skew_summary", "start_spread_ms", "ms", "latest first activity minus the earliest"},
	{"models", "id", "count", "model id"},
	{"models", "kind", "text", "gemm, membound, collective"},
	{"models", "gpu", "text", "GPU fitted"},
	{"models", "op", "text", "dtype, class or collective"},
	{"models", "system", "text", "system fitted (collectives)"},
	{"models", "nranks", "count", "group size fitted"},
	{"models", "n_points", "count", "rows fitted"},
	{"models", "r2", "ratio", "R^2 on log time"},
	{"models", "mape_pct", "%", "in-sample error"},
	{"models", "extrap_mape_pct", "%", "fit on the smaller half, error on the rest"},
	{"models", "domain", "text", "sizes fitted (JSON: min, max, unit)"},
	{"models", "source", "text", "file the rows came from"},
	{"models", "created_at", "time", "when it was fitted (UTC)"},
	{"gaps", "gap", "text", "what the profile is missing"},
};

/* Whether column name matches pattern: "<t>" a communication type, "<N>"
 * digits; else equal. */
static int matches(const char *pattern, const char *name)
{
	const char *lt = strchr(pattern, '<');
	size_t pre;

	if (!lt)
		return strcmp(pattern, name) == 0;
	pre = (size_t)(lt - pattern);
	if (strncmp(pattern, name, pre) != 0)
		return 0;
	name += pre;
	if (strncmp(lt, "<N>", 3) == 0) {
		const char *p = name;

		while (*p >= '0' && *p <= '9')
			p++;
		return p > name && strcmp(p, lt + 3) == 0;
	}
	for (int k = 0; k < CVC_PROJ_COMM_N; k++) {
		const char *t = cvc_proj_comm_name(k);
		size_t tl = strlen(t);

		if (strncmp(name, t, tl) == 0 && strcmp(name + tl, lt + 3) == 0)
			return 1;
	}
	return 0;
}

cvc_status cvc_rep_column_doc(const char *table, const char *name, const char **unit,
			      char *def, size_t len)
{
	const struct repdoc *any = NULL;

	if (strcmp(table, "scenarios") == 0)
		return cvc_proj_column_doc(name, unit, def, len);
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		if (!matches(docs[i].name, name))
			continue;
		if (strcmp(docs[i].table, table) == 0) {
			any = &docs[i];
			break;
		}
		if (!any && strcmp(docs[i].table, "*") == 0)
			any = &docs[i];
	}
	if (!any)
		return CVC_ERR_NOTFOUND;
	*unit = any->unit;
	snprintf(def, len, "%s", any->def);
	return CVC_OK;
}

void cvc_rep_columns_each(void (*cb)(void *arg, const char *table, const char *name,
				     const char *unit, const char *def),
			  void *arg)
{
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
		cb(arg, docs[i].table, docs[i].name, docs[i].unit, docs[i].def);
}
