/*
 * coldoc.c - the column dictionary: what every column of every CSV (and
 * JSON) cvc writes means, with its unit.  The projector's and the report's
 * columns come from their writers' own dictionaries (cvc_proj_columns_each
 * and cvc_proj_column_doc, cvc_rep_columns_each); the tables the commands
 * print are the CLI's, below.  `cvc project --columns` prints the
 * projector's; `cvc help columns --format md` writes docs/COLUMNS.md
 * (ctest lint.columns holds the file equal to it, unit.columns every
 * column written to an entry).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cvc/cvc_project.h"
#include "cvc/cvc_report.h"

struct clidoc {
	const char *table, *name, *unit, *def;
};

/* The tables the commands print (--format csv|json), by command. */
static const struct clidoc cli_docs[] = {
	{"analyze", "run", "text", "run name"},
	{"analyze", "rank", "count", "rank"},
	{"analyze", "device", "count", "GPU index on its host"},
	{"analyze", "step", "count", "ProfilerStep window (--by step)"},
	{"analyze", "kernels", "count", "kernels"},
	{"analyze", "comm_kernels", "count", "communication kernels"},
	{"analyze", "busy_us", "us", "union of all activities"},
	{"analyze", "compute_us", "us", "union of compute activities"},
	{"analyze", "comm_us", "us", "union of communication kernels"},
	{"analyze", "hidden_comm_us", "us", "communication under compute"},
	{"analyze", "exposed_comm_us", "us", "communication not under compute"},
	{"analyze", "overlap_pct", "%", "100 hidden / comm"},
	{"analyze", "idle_us", "us", "span minus busy"},
	{"analyze", "span_us", "us", "first activity start to last end"},
	{"analyze", "comm_share", "fraction of the span", "comm_us / span_us: communication, "
	 "hidden or not, as a part of the traced step (the projector's comm_share of its step)"},
	{"analyze", "exposed_share", "fraction of the span", "exposed_comm_us / span_us"},
	{"analyze", "skew_us", "us", "span end minus the run's earliest span end, clock offsets "
				     "applied (--by rank)"},
	{"analyze --classes", "run", "text", "run name"},
	{"analyze --classes", "rank", "count", "rank"},
	{"analyze --classes", "device", "count", "GPU index on its host"},
	{"analyze --classes", "step", "count", "ProfilerStep window (--by step)"},
	{"analyze --classes", "class", "text", "operator class"},
	{"analyze --classes", "kernels", "count", "kernels of the class"},
	{"analyze --classes", "sum_us", "us", "plain sum of the class's kernel durations"},
	{"analyze --classes", "union_us", "us", "union of the class's kernels"},
	{"analyze --classes", "busy_pct", "%", "100 union / busy of that row"},
	{"analyze --collectives", "run", "text", "run name"},
	{"analyze --collectives", "rank", "count", "rank"},
	{"analyze --collectives", "coll", "text", "collective"},
	{"analyze --collectives", "bytes", "bytes", "message size, nccl-tests convention"},
	{"analyze --collectives", "group_size", "GPUs", "ranks of the collective"},
	{"analyze --collectives", "count", "count", "calls"},
	{"analyze --collectives", "total_us", "us", "summed duration"},
	{"analyze --collectives", "mean_us", "us", "mean duration"},
	{"analyze --collectives", "algbw_gbps", "GB/s", "bytes / time (GB = 1e9 B)"},
	{"analyze --collectives", "busbw_gbps", "GB/s", "algbw times the bus factor (empty: "
							 "unknown)"},
	{"analyze --idle", "run", "text", "run name"},
	{"analyze --idle", "rank", "count", "rank"},
	{"analyze --idle", "device", "count", "device"},
	{"analyze --idle", "gaps", "count", "idle gaps between the device's first start and "
					  "last end"},
	{"analyze --idle", "unlaunched_gaps", "count", "gaps ended by work without launch "
						     "times (never host wait)"},
	{"analyze --idle", "idle_us", "us", "sum of the gaps: the breakdown's idle_us"},
	{"analyze --idle", "host_wait_us", "us", "gaps whose ending work the host launched "
						 "after the gap began"},
	{"analyze --idle", "kernel_wait_us", "us", "other gaps shorter than --kernel-wait-us"},
	{"analyze --idle", "other_us", "us", "the rest: work queued yet not running"},
	{"classify", "class", "text", "operator class"},
	{"classify", "count", "count", "device activities of the class"},
	{"classify", "total_us", "us", "their summed duration"},
	{"classify", "share_pct", "%", "of all device time"},
	{"classify --unknown", "name", "text", "kernel name no rule matches"},
	{"classify --unknown", "count", "count", "launches"},
	{"classify --unknown", "total_us", "us", "summed duration"},
	{"models", "id", "count", "model id"},
	{"models", "kind", "text", "gemm, membound, collective"},
	{"models", "gpu", "text", "GPU fitted (catalog name)"},
	{"models", "system", "text", "system fitted (collectives; empty: any)"},
	{"models", "op", "text", "dtype, class or collective"},
	{"models", "ranks", "count", "group size fitted (collectives)"},
	{"models", "per_node", "GPUs", "GPUs per node of the fit"},
	{"models", "rows", "count", "rows fitted"},
	{"models", "r2", "ratio", "R^2 on log time"},
	{"models", "mape_pct", "%", "in-sample mean absolute percentage error"},
	{"models", "extrap_mape_pct", "%", "fit on the smaller half of the sizes, error on the rest "
					   "(the quality gate: at most 30%)"},
	{"models", "domain_min", "FLOP or bytes", "smallest size fitted"},
	{"models", "domain_max", "FLOP or bytes", "largest size fitted"},
	{"models", "domain_unit", "text", "flop or bytes"},
	{"models", "used", "text", "yes, no (the quality gate keeps it out), level (a collective "
				   "priced only through its large-message level)"},
	{"models", "why_not", "text", "the gate's reason"},
	{"models", "source", "text", "file the rows came from"},
	{"validate", "<input>", "as read", "the published table's own columns, as read"},
	{"validate", "predicted_tokens_per_s_per_gpu", "tokens/s", "cvc's projection of the row"},
	{"validate", "predicted_tokens_per_s_per_gpu_lo", "tokens/s", "low end of its 90% "
								       "interval (empty: none)"},
	{"validate", "predicted_tokens_per_s_per_gpu_hi", "tokens/s", "high end of its 90% "
								       "interval (empty: none)"},
	{"validate", "measured_tokens_per_s_per_gpu", "tokens/s", "the row's measurement, in "
								   "tokens/s per GPU"},
	{"validate", "error_pct", "%", "100 (predicted - measured) / measured"},
	{"validate", "assumed", "text", "what the row did not state and cvc assumed, or why it "
					"was not projected"},
	{"calibrate --plan", "kind", "text", "gemm, attention, membound, collective"},
	{"calibrate --plan", "dtype", "text", "GEMM/attention dtype"},
	{"calibrate --plan", "sub", "text", "class or collective"},
	{"calibrate --plan", "b", "count", "GEMM batch"},
	{"calibrate --plan", "m", "count", "GEMM m"},
	{"calibrate --plan", "n", "count", "GEMM n"},
	{"calibrate --plan", "k", "count", "GEMM k"},
	{"calibrate --plan", "heads", "count", "attention heads"},
	{"calibrate --plan", "kv_heads", "count", "attention key/value heads"},
	{"calibrate --plan", "causal", "0/1", "1: causal attention"},
	{"calibrate --plan", "backward", "0/1", "1: the backward pass"},
	{"calibrate --plan", "bytes", "bytes", "memory-bound or collective size"},
	{"calibrate --plan", "group", "GPUs", "collective group size"},
	{"calibrate --plan", "per_node", "GPUs", "collective GPUs per node"},
	{"calibrate --plan", "uses", "count", "times the study prices it"},
	{"calibrate --plan", "scenarios", "count", "scenarios that price it"},
	{"calibrate --plan", "est_us", "us", "its price on the defaults"},
	{"calibrate --plan", "est_gpu_s", "GPU s", "time to measure it"},
	{"calibrate gemm.rR.csv", "device_key", "text", "the GPU's name as CUDA reports it"},
	{"calibrate gemm.rR.csv", "b", "count", "GEMM batch"},
	{"calibrate gemm.rR.csv", "m", "count", "GEMM m"},
	{"calibrate gemm.rR.csv", "n", "count", "GEMM n"},
	{"calibrate gemm.rR.csv", "k", "count", "GEMM k"},
	{"calibrate gemm.rR.csv", "dtype", "text", "GEMM dtype"},
	{"calibrate gemm.rR.csv", "flops_per_sec", "FLOP/s", "2 b m n k / time"},
	{"calibrate gemm.rR.csv", "time_us", "us", "mean of the timed runs"},
	{"calibrate gemm.rR.csv", "origin", "text", "plan (a GEMM of the study) or attention (one "
						    "of an attention's GEMMs)"},
	{"calibrate attention.rR.csv", "device_key", "text", "the GPU's name as CUDA reports it"},
	{"calibrate attention.rR.csv", "dtype", "text", "attention dtype"},
	{"calibrate attention.rR.csv", "batch", "sequences", "batch"},
	{"calibrate attention.rR.csv", "heads", "count", "attention heads"},
	{"calibrate attention.rR.csv", "kv_heads", "count", "key/value heads"},
	{"calibrate attention.rR.csv", "seq_q", "tokens", "query length"},
	{"calibrate attention.rR.csv", "seq_kv", "tokens", "key/value length"},
	{"calibrate attention.rR.csv", "head_dim", "count", "dimension per head"},
	{"calibrate attention.rR.csv", "causal", "0/1", "1: causal (not exploited: full scores)"},
	{"calibrate attention.rR.csv", "backward", "0/1", "1: the backward pass"},
	{"calibrate attention.rR.csv", "time_us", "us", "its GEMMs plus the softmax"},
	{"calibrate attention.rR.csv", "softmax_us", "us", "of it: the softmax pass"},
	{"calibrate attention.rR.csv", "method", "text", "gemm+softmax (no fused kernel)"},
	{"calibrate membound.rR.csv", "device_key", "text", "the GPU's name as CUDA reports it"},
	{"calibrate membound.rR.csv", "class", "text", "memory-bound class"},
	{"calibrate membound.rR.csv", "bytes", "bytes", "bytes the kernel moves"},
	{"calibrate membound.rR.csv", "time_us", "us", "mean of the timed runs"},
	{"calibrate membound.rR.csv", "gbps", "GB/s", "bytes / time"},
	{"project --models", "name", "text", "the model's name (`model: NAME`)"},
	{"project --models", "aliases", "text", "other names it answers to, space-separated"},
	{"project --models", "source", "text", "where its shape is published (a config file)"},
	{"project --models", "read", "text", "where cvc read it: repository, path and commit"},
	{"help columns", "section", "text", "who writes the table: cvc project, cvc report, "
					    "commands"},
	{"help columns", "table", "text", "the table (or command) the column belongs to"},
	{"help columns", "column", "text", "the column's name as written"},
	{"help columns", "unit", "text", "its unit"},
	{"help columns", "definition", "text", "what it means"},
	{"predict gemm --format", "gpu", "text", "the catalog's GPU name"},
	{"predict gemm --format", "dtype", "text", "GEMM dtype"},
	{"predict gemm --format", "b", "count", "GEMM batch"},
	{"predict gemm --format", "m", "count", "GEMM m"},
	{"predict gemm --format", "n", "count", "GEMM n"},
	{"predict gemm --format", "k", "count", "GEMM k"},
	{"predict gemm --format", "time_us", "us", "predicted GEMM time"},
	{"predict gemm --format", "time_us_lo", "us",
	 "low end of its 90% interval (the price's uncertainty)"},
	{"predict gemm --format", "time_us_hi", "us", "high end of its 90% interval"},
	{"predict gemm --format", "tflops", "TFLOP/s", "2 b m n k / time_us / 1e6"},
	{"predict gemm --format", "model", "text", "what priced it (fit, reference, spec sheet)"},
	{"predict <collective> --format", "collective", "text", "the collective"},
	{"predict <collective> --format", "system", "text", "the catalog's system (or GPU)"},
	{"predict <collective> --format", "bytes", "bytes", "size, nccl-tests convention"},
	{"predict <collective> --format", "gpus", "GPUs", "group size"},
	{"predict <collective> --format", "per_node", "GPUs", "group members per node"},
	{"predict <collective> --format", "time_us", "us", "predicted time"},
	{"predict <collective> --format", "time_us_lo", "us",
	 "low end of its 90% interval (the price's uncertainty)"},
	{"predict <collective> --format", "time_us_hi", "us", "high end of its 90% interval"},
	{"predict <collective> --format", "algbw_gbps", "GB/s", "bytes / time"},
	{"predict <collective> --format", "busbw_gbps", "GB/s", "algbw times the collective's "
								 "bus factor (nccl-tests)"},
	{"predict <collective> --format", "model", "text", "what priced it (fit or spec sheet)"},
	{"predict attention --format", "gpu", "text", "the catalog's GPU name"},
	{"predict attention --format", "dtype", "text", "dtype it was priced in (the GPU's path "
							"for --dtype)"},
	{"predict attention --format", "backend", "text", "the attention library (a default "
							  "resolved on the GPU)"},
	{"predict attention --format", "pass", "text", "forward or backward"},
	{"predict attention --format", "b", "count", "batch"},
	{"predict attention --format", "heads", "count", "query heads"},
	{"predict attention --format", "kv_heads", "count", "key/value heads"},
	{"predict attention --format", "head_dim", "count", "dimension per head"},
	{"predict attention --format", "seq", "tokens", "sequence length (queries and keys)"},
	{"predict attention --format", "causal", "0/1", "1: under a causal mask"},
	{"predict attention --format", "time_us", "us", "predicted attention time"},
	{"predict attention --format", "time_us_lo", "us",
	 "low end of its 90% interval (the price's uncertainty)"},
	{"predict attention --format", "time_us_hi", "us", "high end of its 90% interval"},
	{"predict attention --format", "tflops", "TFLOP/s", "4 b heads seq^2 head_dim (x0.5 "
							    "causal, x2.5 backward) / time_us / 1e6"},
	{"predict attention --format", "model", "text", "what priced it (the curves and their "
							"carry to the GPU)"},
	{"predict membound --format", "gpu", "text", "the catalog's GPU name"},
	{"predict membound --format", "class", "text", "memory-bound class"},
	{"predict membound --format", "bytes", "bytes", "bytes read and written"},
	{"predict membound --format", "time_us", "us", "predicted time"},
	{"predict membound --format", "time_us_lo", "us",
	 "low end of its 90% interval (the price's uncertainty)"},
	{"predict membound --format", "time_us_hi", "us", "high end of its 90% interval"},
	{"predict membound --format", "gbps", "GB/s", "bytes / time"},
	{"predict membound --format", "model", "text", "what priced it (fit or spec sheet)"},
	{"predict --csv", "<input>", "as read", "the shapes file's own columns"},
	{"predict --csv", "time_us", "us", "predicted GEMM time"},
	{"project (table)", "model", "text", "model name"},
	{"project (table)", "hardware", "text", "GPU and the scale factors that are not 1"},
	{"project (table)", "gpus", "GPUs", "GPU count"},
	{"project (table)", "layout", "text", "tp pp dp mb, cp/ep/zero when used, rc: recompute"},
	{"project (table)", "fits", "text", "yes, no (over HBM) or invalid"},
	{"project (table)", "tokens_per_s_per_gpu", "tokens/s", "throughput per GPU"},
	{"project (table)", "step_s", "s", "step time"},
	{"project (table)", "mfu", "fraction", "model FLOPs utilisation"},
	{"project (table)", "comm_share (90%)", "% of the step", "comm_s / step_s (90% interval)"},
	{"project (table)", "exposed_share (90%)", "% of the step", "exposed_s / step_s (90% "
								     "interval)"},
	{"project (table)", "mem_gb", "GB", "peak memory per GPU"},
	{"project (table)", "index", "count", "the scenario's index (the CSV's)"},
};

/* The dictionary as one table: section, table, column, unit, definition. */
struct dict {
	cvc_rep_table *t;
	const char *section;
	int bad;
};

static void add(struct dict *d, const char *table, const char *name, const char *unit,
		const char *def)
{
	long r = cvc_rep_table_add_row(d->t);

	if (r < 0 || cvc_rep_table_set_str(d->t, (size_t)r, 0, d->section) ||
	    cvc_rep_table_set_str(d->t, (size_t)r, 1, table) ||
	    cvc_rep_table_set_str(d->t, (size_t)r, 2, name) ||
	    cvc_rep_table_set_str(d->t, (size_t)r, 3, unit) ||
	    cvc_rep_table_set_str(d->t, (size_t)r, 4, def))
		d->bad = 1;
}

/* The projector's columns in the writer's order, each with its entry. */
static void proj_col(void *arg, const char *name)
{
	struct dict *d = arg;
	const char *unit = "?";
	char def[256];

	if (cvc_proj_column_doc(name, &unit, def, sizeof def) != CVC_OK)
		snprintf(def, sizeof def, "NO ENTRY (projector/coldoc.c)");
	add(d, "project --csv/--json", name, unit, def);
}

static void rep_col(void *arg, const char *table, const char *name, const char *unit,
		    const char *def)
{
	add(arg, strcmp(table, "*") == 0 ? "every table" : table, name, unit, def);
}

/* The whole dictionary (projector, report, commands), or the projector's. */
static cvc_rep_table *dictionary(int proj_only)
{
	static const char *const cols[] = {"section", "table", "column", "unit", "definition"};
	struct dict d = {cvc_rep_table_new("columns", NULL, 5, cols), "cvc project", 0};

	if (!d.t)
		return NULL;
	cvc_proj_columns_each(proj_col, &d);
	d.section = "cvc report";
	if (!proj_only) {
		cvc_rep_columns_each(rep_col, &d);
		d.section = "commands";
		for (size_t i = 0; i < sizeof cli_docs / sizeof cli_docs[0]; i++)
			add(&d, cli_docs[i].table, cli_docs[i].name, cli_docs[i].unit,
			    cli_docs[i].def);
	}
	if (d.bad) {
		cvc_rep_table_free(d.t);
		return NULL;
	}
	return d.t;
}

/* A Markdown cell: '|' escaped, and '<' '>' as entities outside code
 * (a renderer takes "<t>" for a tag). */
static void md_cell(const char *s, int code)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', stdout);
		if (!code && (*s == '<' || *s == '>'))
			fputs(*s == '<' ? "&lt;" : "&gt;", stdout);
		else
			fputc(*s, stdout);
	}
}

/* docs/COLUMNS.md: a section per writer, a table per section. */
static void print_md(const cvc_rep_table *t)
{
	const char *section = "";

	puts("# Columns\n");
	puts("What every column of every CSV (and JSON) cvc writes means, with its unit.");
	puts("Generated: `cvc help columns --format md > docs/COLUMNS.md` (ctest lint.columns");
	puts("fails when this file differs from it; unit.columns fails on a column written");
	puts("without an entry). Units: GB = 1e9 bytes, GB/s = 1e9 bytes/s; a fraction is a");
	puts("number from 0 to 1, a `_pct` or % column a percentage; `<t>` is a communication");
	puts("type (tp, pp, dp, fsdp, ep, cp, xc), `<N>` a number, `<input>` the input file's");
	puts("own columns.");
	for (size_t r = 0; r < cvc_rep_table_nrows(t); r++) {
		if (strcmp(section, cvc_rep_table_str(t, r, 0)) != 0) {
			section = cvc_rep_table_str(t, r, 0);
			printf("\n## %s\n\n| table | column | unit | definition |\n|---|---|---|---|\n",
			       section);
		}
		fputs("| ", stdout);
		for (size_t c = 1; c < 5; c++) {
			if (c == 2)
				fputc('`', stdout);
			md_cell(cvc_rep_table_str(t, r, c), c == 2);
			fputs(c == 2 ? "` | " : c < 4 ? " | " : " |\n", stdout);
		}
	}
}

static int print_dictionary(int proj_only, const char *format)
{
	cvc_rep_table *t = dictionary(proj_only);

	if (!t)
		return cli_fail(CVC_ERR_NOMEM, "columns: out of memory");
	if (strcmp(format, "md") == 0)
		print_md(t);
	else
		cli_table_print(t, format);
	cvc_rep_table_free(t);
	return 0;
}

int cli_proj_columns(const char *format)
{
	return print_dictionary(1, format);
}

int cli_help_columns(int argc, char **argv)
{
	const char *format = "table";
	const struct cli_opt opts[] = {
		{"format", 'f', CLI_CHOICE, &format, "FMT", "output format", "table|csv|json|md"},
		{0},
	};
	int npos = 0, r = cli_parse("help columns", "[--format table|csv|json|md]", opts, argc,
				    argv, &npos, NULL);

	if (r)
		return r < 0 ? 0 : r;
	if (npos)
		return cli_error("help columns: unexpected argument '%s'", argv[1]);
	return print_dictionary(0, format);
}
