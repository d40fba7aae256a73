/*
 * output.c - scenario results as CSV and JSON, and metrics by name (for
 * --top K --by METRIC).  Columns come from two tables: the scenario fields
 * (fields.c) and the result metrics below, so the CSV header, the JSON keys
 * and the metric names never disagree.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "proj_internal.h"
#include "cvc/cvc_csv.h"

#define R(name) {#name, offsetof(cvc_proj_result, name), -1, ""}
#define RT(prefix, member, k) {prefix, offsetof(cvc_proj_result, member), k, ""}
#define RTS(prefix, member, k, sfx) {prefix, offsetof(cvc_proj_result, member), k, sfx}

struct metric {
	const char *name;   /* with k >= 0: prefix, completed by the comm type */
	size_t offset;
	int k;
	const char *suffix; /* after the comm type's "_s" ("_lo", "_hi") */
};

static const struct metric metrics[] = {
	R(step_s), R(compute_s), R(bubble_s), R(comm_s), R(hidden_s), R(exposed_s),
	RT("comm_", comm_type_s, 0), RT("comm_", comm_type_s, 1), RT("comm_", comm_type_s, 2),
	RT("comm_", comm_type_s, 3), RT("comm_", comm_type_s, 4), RT("comm_", comm_type_s, 5),
	RT("comm_", comm_type_s, 6),
	RT("hidden_", hidden_type_s, 0), RT("hidden_", hidden_type_s, 1),
	RT("hidden_", hidden_type_s, 2), RT("hidden_", hidden_type_s, 3),
	RT("hidden_", hidden_type_s, 4), RT("hidden_", hidden_type_s, 5),
	RT("hidden_", hidden_type_s, 6),
	RT("exposed_", exposed_type_s, 0), RT("exposed_", exposed_type_s, 1),
	RT("exposed_", exposed_type_s, 2), RT("exposed_", exposed_type_s, 3),
	RT("exposed_", exposed_type_s, 4), RT("exposed_", exposed_type_s, 5),
	RT("exposed_", exposed_type_s, 6),
	R(contention_s), R(gaps_s), R(host_s), R(comm_share), R(exposed_share),
	R(comm_to_compute), R(mem_gb), R(mem_params_gb), R(mem_act_gb),
	R(mem_buf_gb), R(hbm_gb), R(params_b), R(active_params_b),
	R(model_flops), R(hw_flops), R(mfu), R(hfu), R(tokens_per_s),
	R(tokens_per_s_per_gpu), R(train_days), R(gpu_hours), R(energy_mwh), R(cost_usd),
	R(half_tokens_per_s), R(marginal_tokens_per_gpu),
	/* 90% intervals (docs/MODELS.md "Uncertainty") */
	R(sigma), R(step_s_lo), R(step_s_hi), R(compute_s_lo), R(compute_s_hi), R(comm_s_lo),
	R(comm_s_hi),
	RTS("comm_", comm_type_lo_s, 0, "_lo"), RTS("comm_", comm_type_hi_s, 0, "_hi"),
	RTS("comm_", comm_type_lo_s, 1, "_lo"), RTS("comm_", comm_type_hi_s, 1, "_hi"),
	RTS("comm_", comm_type_lo_s, 2, "_lo"), RTS("comm_", comm_type_hi_s, 2, "_hi"),
	RTS("comm_", comm_type_lo_s, 3, "_lo"), RTS("comm_", comm_type_hi_s, 3, "_hi"),
	RTS("comm_", comm_type_lo_s, 4, "_lo"), RTS("comm_", comm_type_hi_s, 4, "_hi"),
	RTS("comm_", comm_type_lo_s, 5, "_lo"), RTS("comm_", comm_type_hi_s, 5, "_hi"),
	RTS("comm_", comm_type_lo_s, 6, "_lo"), RTS("comm_", comm_type_hi_s, 6, "_hi"),
	R(hidden_s_lo), R(hidden_s_hi), R(exposed_s_lo), R(exposed_s_hi), R(comm_share_lo),
	R(comm_share_hi), R(exposed_share_lo), R(exposed_share_hi), R(mfu_lo), R(mfu_hi),
	R(tokens_per_s_lo), R(tokens_per_s_hi), R(tokens_per_s_per_gpu_lo),
	R(tokens_per_s_per_gpu_hi), R(train_days_lo), R(train_days_hi), R(cost_usd_lo),
	R(cost_usd_hi),
	/* step time / step time with the resource doubled */
	R(gain_compute), R(gain_hbm_bw), R(gain_hbm_cap), R(gain_intra_bw), R(gain_inter_bw),
	/* local SGD / DiLoCo: the token side (localsgd.c) */
	R(loss_penalty_pct), R(token_factor), R(token_factor_lo), R(token_factor_hi),
	R(eff_tokens_per_s), R(eff_tokens_per_s_lo), R(eff_tokens_per_s_hi), R(days_to_loss),
	/* activations offloaded to the host (offload.c) */
	R(offload_s), R(mem_offload_gb),
};
#define NMETRICS (sizeof metrics / sizeof metrics[0])

static void metric_name(const struct metric *m, char *buf, size_t len)
{
	if (m->k >= 0)
		snprintf(buf, len, "%s%s_s%s", m->name, cvc_proj_comm_name(m->k), m->suffix);
	else
		snprintf(buf, len, "%s", m->name);
}

static double metric_value(const struct metric *m, const cvc_proj_result *r)
{
	const double *p = (const double *)((const char *)r + m->offset);

	return m->k >= 0 ? p[m->k] : *p;
}

int proj_metric_find(const char *name)
{
	char buf[64];

	for (size_t i = 0; i < NMETRICS; i++) {
		metric_name(&metrics[i], buf, sizeof buf);
		if (strcmp(buf, name) == 0)
			return (int)i;
	}
	if (strcmp(name, "fits") == 0)
		return (int)NMETRICS;
	if (strcmp(name, "valid") == 0)
		return (int)NMETRICS + 1;
	return -1;
}

double proj_metric_get(const cvc_proj_result *r, int idx)
{
	if (idx >= 0 && (size_t)idx < NMETRICS)
		return metric_value(&metrics[idx], r);
	if ((size_t)idx == NMETRICS)
		return r->fits;
	if ((size_t)idx == NMETRICS + 1)
		return r->valid;
	return NAN;
}

cvc_status cvc_proj_metric(const cvc_proj_scenario *sc, const cvc_proj_result *r,
			   const char *name, double *out)
{
	int f = proj_metric_find(name);

	if (f >= 0) {
		*out = proj_metric_get(r, f);
		return CVC_OK;
	}
	f = proj_field_find(NULL, name);
	if (f >= 0 && proj_fields[f].type != PF_STR) {
		*out = proj_field_get(sc, f);
		return CVC_OK;
	}
	return CVC_ERR_NOTFOUND;
}

const char *cvc_proj_metric_names(void)
{
	static char names[8192];

	if (!names[0]) {
		size_t off = 0;

		for (size_t i = 0; i < NMETRICS; i++) {
			char buf[64];
			int n;

			metric_name(&metrics[i], buf, sizeof buf);
			n = snprintf(names + off, sizeof names - off, "%s%s", i ? "," : "", buf);
			if (n < 0 || (size_t)n >= sizeof names - off)
				break;
			off += (size_t)n;
		}
	}
	return names;
}

static void field_text(const cvc_proj_scenario *sc, size_t i, char *buf, size_t len)
{
	const struct proj_field *fd = &proj_fields[i];

	switch (fd->type) {
	case PF_STR: {
		/* as snprintf's "%s" would, without it: a CSV row has dozens */
		const char *s = *(const char *const *)((const char *)sc + fd->offset);
		size_t n = 0;

		for (; s && s[n] && n + 1 < len; n++)
			buf[n] = s[n];
		buf[n] = '\0';
		break;
	}
	case PF_ENUM:
		proj_enum_name(fd->names, (int)proj_field_get(sc, (int)i), buf, len);
		break;
	case PF_FLAG: /* an int: "%.0f" writes what "%d" would */
		cvc_fmt_whole((int)proj_field_get(sc, (int)i), buf, len);
		break;
	case PF_NUM: {
		double v = proj_field_get(sc, (int)i);

		if (fd->allow_auto && v == PROJ_AUTO)
			snprintf(buf, len, "auto");
		else
			cvc_fmt_plain(v, 6, buf, len);
		break;
	}
	}
}

void cvc_proj_columns_each(void (*cb)(void *arg, const char *name), void *arg)
{
	static const char *const head[] = {"study", "index"}, *const mid[] = {"valid", "reason",
										  "fits"};
	char buf[64];

	for (size_t i = 0; i < 2; i++)
		cb(arg, head[i]);
	for (size_t i = 0; i < proj_nfields; i++)
		cb(arg, proj_fields[i].key);
	for (size_t i = 0; i < 3; i++)
		cb(arg, mid[i]);
	for (size_t i = 0; i < NMETRICS; i++) {
		metric_name(&metrics[i], buf, sizeof buf);
		cb(arg, buf);
	}
	cb(arg, "warnings");
}

void cvc_proj_csv_header(FILE *f)
{
	fputs("study,index", f);
	for (size_t i = 0; i < proj_nfields; i++)
		fprintf(f, ",%s", proj_fields[i].key);
	fputs(",valid,reason,fits", f);
	for (size_t i = 0; i < NMETRICS; i++) {
		char buf[64];

		metric_name(&metrics[i], buf, sizeof buf);
		fprintf(f, ",%s", buf);
	}
	fputs(",warnings\n", f);
}

/*
 * A CSV record gathered before it is written: one fwrite a row instead of
 * one locked stdio call per cell (211 cells; the writes cost more than
 * the projection did).  A cell that needs quoting, rare, is written by
 * cvc_csv_field() after what was gathered.
 */
struct line {
	FILE *f;
	size_t n;
	char b[8192];
};

static void line_flush(struct line *l)
{
	if (l->n)
		fwrite(l->b, 1, l->n, l->f);
	l->n = 0;
}

static void line_put(struct line *l, const char *s, size_t n)
{
	if (n > sizeof l->b - l->n) {
		line_flush(l);
		if (n > sizeof l->b) {
			fwrite(s, 1, n, l->f);
			return;
		}
	}
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

static void line_sep(struct line *l, char c)
{
	if (l->n == sizeof l->b)
		line_flush(l);
	l->b[l->n++] = c;
}

static void line_cell(struct line *l, const char *s)
{
	size_t n;

	if (!s)
		return;
	n = strlen(s);
	if (cvc_csv_verbatim(s, n)) {
		line_put(l, s, n);
	} else {
		line_flush(l);
		cvc_csv_field(l->f, s);
	}
}

void cvc_proj_csv_row(FILE *f, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	struct line l;
	char buf[256];

	l.f = f;
	l.n = 0;
	line_cell(&l, sc->study);
	line_sep(&l, ',');
	if (sc->index <= 9007199254740992u) /* exact as a double */
		cvc_fmt_whole((double)sc->index, buf, sizeof buf);
	else
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)sc->index);
	line_put(&l, buf, strlen(buf));
	for (size_t i = 0; i < proj_nfields; i++) {
		const struct proj_field *fd = &proj_fields[i];

		line_sep(&l, ',');
		field_text(sc, i, buf, sizeof buf);
		if (fd->type == PF_NUM) /* digits, a sign and a point, or "auto" */
			line_put(&l, buf, strlen(buf));
		else
			line_cell(&l, buf);
	}
	line_sep(&l, ',');
	cvc_fmt_whole(r->valid, buf, sizeof buf);
	line_put(&l, buf, strlen(buf));
	line_sep(&l, ',');
	line_cell(&l, r->reason);
	line_sep(&l, ',');
	cvc_fmt_whole(r->fits, buf, sizeof buf);
	line_put(&l, buf, strlen(buf));
	for (size_t i = 0; i < NMETRICS; i++) {
		line_sep(&l, ',');
		/* 6 significant digits, never an exponent (4515924, not
		 * 4.51592e+06); empty: not applicable */
		if (r->valid) {
			cvc_fmt_plain(metric_value(&metrics[i], r), 6, buf, sizeof buf);
			line_put(&l, buf, strlen(buf));
		}
	}
	line_sep(&l, ',');
	line_cell(&l, r->valid ? r->warnings : "");
	line_sep(&l, '\n');
	line_flush(&l);
}

void proj_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void cvc_proj_json_begin(FILE *f, const char *study)
{
	fputs("{\"study\":", f);
	proj_json_str(f, study);
	fputs(",\"scenarios\":[\n", f);
}

void cvc_proj_json_row(FILE *f, int first, const cvc_proj_scenario *sc,
		       const cvc_proj_result *r)
{
	char buf[256], num_buf[48];

	fputs(first ? "{" : ",\n{", f);
	fprintf(f, "\"index\":%llu", (unsigned long long)sc->index);
	for (size_t i = 0; i < proj_nfields; i++) {
		const struct proj_field *fd = &proj_fields[i];

		fprintf(f, ",\"%s\":", fd->key);
		field_text(sc, i, buf, sizeof buf);
		if (fd->type == PF_NUM && strcmp(buf, "auto") != 0)
			fputs(buf, f);
		else if (fd->type == PF_FLAG)
			fputs(buf, f);
		else
			proj_json_str(f, buf);
	}
	fprintf(f, ",\"valid\":%s,\"reason\":", r->valid ? "true" : "false");
	proj_json_str(f, r->reason);
	fprintf(f, ",\"fits\":%s", r->fits ? "true" : "false");
	for (size_t i = 0; i < NMETRICS && r->valid; i++) {
		double v = metric_value(&metrics[i], r);

		metric_name(&metrics[i], buf, sizeof buf);
		if (isfinite(v))
			fprintf(f, ",\"%s\":%s", buf, cvc_fmt_plain(v, 6, num_buf, sizeof num_buf));
		else
			fprintf(f, ",\"%s\":null", buf);
	}
	if (r->valid) {
		fputs(",\"warnings\":", f);
		proj_json_str(f, r->warnings);
	}
	fputc('}', f);
}

cvc_status cvc_proj_json_end(FILE *f, cvc_proj_ctx *ctx)
{
	cvc_status st = CVC_OK;

	fputs("\n]", f);
	if (ctx) {
		fputs(",\n\"provenance\":", f);
		st = cvc_proj_provenance_write(ctx, f);
	}
	fputs("}\n", f);
	return st;
}
