/*
 * findings.c - the first screen's words, computed from the headline table:
 * for every model and GPU count one sentence (communication and exposed
 * shares from the oldest to the newest hardware at that count, with their
 * intervals; the type that leads the exposed time; the layouts flagged
 * there), and the advice: per model and hardware the most GPUs whose best
 * layout carries no flag, and per model the one the numbers recommend.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "headline.h"

/* "35.2% (28.1–41.0%)": a share with its interval when there is one, to
 * 3 significant figures as every number of the page (it was whole
 * percents: "1% (0–1%)" beside the table's 0.7% (0.5–1.1%)). */
static const char *pct(const cvc_rep_table *t, size_t r, int c, int lo, char *buf, size_t len)
{
	double v = rep_num(t, r, c), a = rep_num(t, r, lo), b = rep_num(t, r, lo + 1);
	char pv[24], pa[24], pb[24];

	rep_pct3(v, pv, sizeof pv);
	if (isfinite(a) && isfinite(b)) {
		/* "0.700% (0.500–1.10%)": the page's pctIv, one % at the end */
		rep_pct3(a, pa, sizeof pa);
		pa[strcspn(pa, "%")] = '\0';
		/* cut short at len, as every sentence of the page's buffers is */
		if (snprintf(buf, len, "%s (%s\xe2\x80\x93%s)", pv, pa,
			     rep_pct3(b, pb, sizeof pb)) < 0 && len)
			buf[0] = '\0';
	}
	else
		snprintf(buf, len, "%s", pv);
	return buf;
}

/* A count with thousands separators: "16,384". */
const char *rep_fmt_count(double v, char *buf, size_t len)
{
	char d[40];
	size_t n, o = 0;
	int w = snprintf(d, sizeof d, "%.0f", fabs(v));

	if (w < 0 || (size_t)w >= sizeof d || len < 2) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	n = (size_t)w;
	if (v < 0 && o + 1 < len)
		buf[o++] = '-';
	for (size_t i = 0; i < n && o + 1 < len; i++) {
		if (i && (n - i) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = '\0';
	return buf;
}

/* Three significant figures with a k/M/G suffix: "9.45 M". */
static const char *sig3(double v, char *buf, size_t len)
{
	static const char *const sfx[] = {"", " k", " M", " G", " T"};
	size_t k = 0;

	while (fabs(v) >= 999.5 && k + 1 < sizeof sfx / sizeof sfx[0]) {
		v /= 1000;
		k++;
	}
	snprintf(buf, len, "%.*f%s", fabs(v) >= 99.95 ? 0 : fabs(v) >= 9.995 ? 1 : 2, v, sfx[k]);
	return buf;
}

static void upper(const char *s, char *buf, size_t len)
{
	size_t i = 0;

	for (; s[i] && i + 1 < len; i++)
		buf[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
	buf[i] = '\0';
}

/* Which type leads the exposed time over rows a..b of t, and how it moves:
 * " DP leads the exposed time on every generation (79% → 53% of it)." */
static void type_clause(const cvc_rep_table *t, size_t a, size_t b, char *buf, size_t len)
{
	const char *ta = rep_cell_at(t, a, H_TOP)->s, *tb = rep_cell_at(t, b, H_TOP)->s;
	char ua[16], ub[16], pa[24], pb[24];
	int same = 1;

	for (size_t i = a; i <= b; i++)
		same = same && strcmp(rep_cell_at(t, i, H_TOP)->s, ta) == 0;
	upper(ta, ua, sizeof ua);
	upper(tb, ub, sizeof ub);
	rep_pct3(rep_num(t, a, H_TOP_FRAC), pa, sizeof pa);
	rep_pct3(rep_num(t, b, H_TOP_FRAC), pb, sizeof pb);
	if (!*ta && !*tb)
		snprintf(buf, len, " No communication is exposed.");
	else if (same && a == b)
		snprintf(buf, len, " %s leads the exposed time (%s of it).", ua, pa);
	else if (same || strcmp(ta, tb) == 0)
		snprintf(buf, len, " %s leads the exposed time %s (%s \xe2\x86\x92 %s of it).",
			 ua, same ? "on every generation" : "on the oldest and the newest", pa, pb);
	else
		snprintf(buf, len, " The lead of the exposed time moves from %s (%s) to %s "
			 "(%s).", *ua ? ua : "none", pa, *ub ? ub : "none", pb);
}

/* "11.2–19.4%" over the values of column c in rows a..b past the flag's
 * threshold (below it with below, else above); "" when none is. */
static int flag_range(const cvc_rep_table *t, size_t from, size_t to, int c, double thr,
		      int below, char *buf, size_t len)
{
	double lo = INFINITY, hi = -INFINITY;
	char a[16], b[16];

	for (size_t i = from; i <= to; i++) {
		double v = rep_num(t, i, c);

		if (below ? v < thr : v > thr) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	buf[0] = '\0';
	if (!isfinite(lo))
		return 0;
	rep_pct3(lo, a, sizeof a);
	rep_pct3(hi, b, sizeof b);
	if (lo == hi)
		snprintf(buf, len, "%s", a);
	else /* "11.2–19.4%": one percent sign */
		snprintf(buf, len, "%.*s\xe2\x80\x93%s", (int)strlen(a) - 1, a, b);
	return 1;
}

/*
 * " Far from the best: 3 of 5 (scaling efficiency 28.8–46.2%, bubble
 * 26.3–36.9%)." over the flagged rows of a..b (the per-hardware flags are
 * the headline's); "" when none is flagged.  Returns how many are.
 */
static int flag_clause(const cvc_rep_table *t, size_t a, size_t b, char *buf, size_t len)
{
	static const struct {
		int c, below;
		double thr;
		const char *name;
	} kinds[] = {{H_EFF, 1, REP_FLAG_EFF, "scaling efficiency "},
		     {H_BUBBLE, 0, REP_FLAG_BUBBLE, "bubble "},
		     {H_HOST, 0, REP_FLAG_HOST, "host-bound, host wait "},
		     {H_ROOM, 1, REP_FLAG_ROOM, "HBM left "}};
	char items[200] = "", one[40], who[160];
	int k = 0;

	buf[0] = '\0';
	for (size_t i = a; i <= b; i++)
		k += *rep_cell_at(t, i, H_FLAGS)->s != '\0';
	if (!k)
		return 0;
	for (size_t q = 0; q < sizeof kinds / sizeof kinds[0]; q++) {
		size_t n = strlen(items);

		if (flag_range(t, a, b, kinds[q].c, kinds[q].thr, kinds[q].below, one, sizeof one))
			snprintf(items + n, sizeof items - n, "%s%s%s", n ? ", " : "", kinds[q].name,
				 one);
	}
	if (b == a)
		snprintf(who, sizeof who, "%s", "");
	else if ((size_t)k == b - a + 1)
		snprintf(who, sizeof who, "every hardware ");
	else if (k == 1)
		for (size_t i = a; i <= b; i++) {
			if (*rep_cell_at(t, i, H_FLAGS)->s)
				snprintf(who, sizeof who, "%s ", rep_cell_at(t, i, H_HW)->s);
		}
	else
		snprintf(who, sizeof who, "%d of %zu ", k, b - a + 1);
	/* cut short at len, as the page's other sentences are */
	if (snprintf(buf, len, " Far from the best: %s(%s).", who, items) < 0 && len)
		buf[0] = '\0';
	return k;
}

/* The finding of rows a..b of the headline (one model at one GPU count,
 * oldest to newest hardware) as a sentence; sync: row b's local-SGD clause. */
static int finding(const cvc_rep_table *t, size_t a, size_t b, const char *sync, char *buf,
		   size_t len)
{
	char ca[48], cb[48], ea[48], eb[48], g[32], tail[300], flags[300];
	const char *m = rep_cell_at(t, a, H_MODEL)->s, *ha = rep_cell_at(t, a, H_HW)->s;
	int nf = flag_clause(t, a, b, flags, sizeof flags);

	rep_fmt_count(rep_num(t, a, H_GPUS), g, sizeof g);
	pct(t, a, H_CS, H_CS_LO, ca, sizeof ca);
	pct(t, b, H_CS, H_CS_LO, cb, sizeof cb);
	pct(t, a, H_ES, H_ES_LO, ea, sizeof ea);
	pct(t, b, H_ES, H_ES_LO, eb, sizeof eb);
	type_clause(t, a, b, tail, sizeof tail);
	if (a == b)
		snprintf(buf, len, "%s at %s GPUs on %s: communication %s of the step, %s "
			 "exposed.%s%s%s", m, g, ha, ca, ea, tail, sync, flags);
	else
		snprintf(buf, len, "%s at %s GPUs: communication %s of the step on %s, %s on %s; "
			 "exposed %s \xe2\x86\x92 %s; tokens/s per GPU \xc3\x97%.2g.%s%s%s", m, g, ca,
			 ha, cb, rep_cell_at(t, b, H_HW)->s, ea, eb,
			 rep_num(t, b, H_TPG) / rep_num(t, a, H_TPG), tail, sync, flags);
	return nf;
}

static int same_str(const cvc_rep_table *t, size_t i, size_t j, int c)
{
	return strcmp(rep_cell_at(t, i, (size_t)c)->s, rep_cell_at(t, j, (size_t)c)->s) == 0;
}

/* findings: one row per model and GPU count, oldest to newest hardware. */
static int findings_table(const cvc_rep_table *hl, const char *const *sync,
			  struct rep_tables *out)
{
	static const char *const cols[] = {"model", "gpus", "from_hw", "to_hw", "flagged",
					   "finding"};
	cvc_rep_table *t = cvc_rep_table_new("findings", "What the projection says, per model "
					     "and GPU count", 6, cols);
	char text[2000];
	int rc = t ? 0 : -1;

	for (size_t a = 0, b; !rc && a < hl->nrows; a = b + 1) {
		long k;
		int nf;

		for (b = a; b + 1 < hl->nrows && same_str(hl, a, b + 1, H_MODEL) &&
			    rep_num(hl, b + 1, H_GPUS) == rep_num(hl, a, H_GPUS);
		     b++)
			;
		nf = finding(hl, a, b, sync[b], text, sizeof text);
		k = cvc_rep_table_add_row(t);
		if (k < 0 || cvc_rep_table_set_str(t, (size_t)k, 0, rep_cell_at(hl, a, H_MODEL)->s) ||
		    cvc_rep_table_set_str(t, (size_t)k, 2, rep_cell_at(hl, a, H_HW)->s) ||
		    cvc_rep_table_set_str(t, (size_t)k, 3, rep_cell_at(hl, b, H_HW)->s) ||
		    cvc_rep_table_set_str(t, (size_t)k, 5, text)) {
			rc = -1;
			break;
		}
		cvc_rep_table_set_num(t, (size_t)k, 1, rep_num(hl, a, H_GPUS));
		cvc_rep_table_set_num(t, (size_t)k, 4, nf);
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

enum {
	A_MODEL, A_HW, A_GPUS, A_LAYOUT, A_TPS, A_CS, A_CS_LO, A_CS_HI, A_ES, A_ES_LO, A_ES_HI,
	A_TOP, A_FLAGS, A_BEYOND, A_BEYOND_FLAGS, A_REC, A_TEXT, A_N
};

static int unflagged(const cvc_rep_table *hl, size_t i)
{
	const char *f = rep_cell_at(hl, i, H_FLAGS)->s;

	return !f || !*f;
}

/*
 * The row of hl the advice for (model, hardware) of row i names: the most
 * GPUs whose best layout carries no flag, else (every count flagged) the
 * fewest GPUs.  *beyond: the next larger count of that hardware, or -1.
 */
static size_t advised(const cvc_rep_table *hl, size_t i, long *beyond)
{
	long pick = -1, lo = -1;

	*beyond = -1;
	for (size_t j = 0; j < hl->nrows; j++) {
		if (!same_str(hl, i, j, H_MODEL) || !same_str(hl, i, j, H_HW))
			continue;
		if (lo < 0 || rep_num(hl, j, H_GPUS) < rep_num(hl, (size_t)lo, H_GPUS))
			lo = (long)j;
		if (unflagged(hl, j) &&
		    (pick < 0 || rep_num(hl, j, H_GPUS) > rep_num(hl, (size_t)pick, H_GPUS)))
			pick = (long)j;
	}
	if (pick < 0)
		pick = lo;
	for (size_t j = 0; j < hl->nrows; j++)
		if (same_str(hl, i, j, H_MODEL) && same_str(hl, i, j, H_HW) &&
		    rep_num(hl, j, H_GPUS) > rep_num(hl, (size_t)pick, H_GPUS) &&
		    (*beyond < 0 || rep_num(hl, j, H_GPUS) < rep_num(hl, (size_t)*beyond, H_GPUS)))
			*beyond = (long)j;
	return (size_t)pick;
}

/* The advice as a sentence, for row p of hl (beyond: the next count or -1). */
static void advice_text(const cvc_rep_table *hl, size_t p, long beyond, char *buf, size_t len)
{
	char g[32], gb[32], tps[32], cs[48], es[48], top[16], tail[300];
	const char *f = rep_cell_at(hl, p, H_FLAGS)->s;

	rep_fmt_count(rep_num(hl, p, H_GPUS), g, sizeof g);
	sig3(rep_num(hl, p, H_TPS), tps, sizeof tps);
	pct(hl, p, H_CS, H_CS_LO, cs, sizeof cs);
	rep_pct3(rep_num(hl, p, H_ES), es, sizeof es);
	upper(rep_cell_at(hl, p, H_TOP)->s, top, sizeof top);
	if (*f)
		snprintf(tail, sizeof tail, "; even its fewest GPUs are far from the best: %s", f);
	else if (beyond >= 0)
		snprintf(tail, sizeof tail, "; at %s GPUs %s",
			 rep_fmt_count(rep_num(hl, (size_t)beyond, H_GPUS), gb, sizeof gb),
			 rep_cell_at(hl, (size_t)beyond, H_FLAGS)->s);
	else
		snprintf(tail, sizeof tail, "; no flag up to the study's largest count");
	snprintf(buf, len, "%s: %s GPUs of %s (%s): %s tokens/s; communication %s, "
		 "%s exposed%s%s%s%s.", rep_cell_at(hl, p, H_MODEL)->s, g,
		 rep_cell_at(hl, p, H_HW)->s, rep_cell_at(hl, p, H_LAYOUT)->s, tps, cs, es,
		 *top ? " (" : "", top, *top ? ")" : "", tail);
}

/* Fills advice row k from headline row p. */
static int advice_row(cvc_rep_table *t, long k, const cvc_rep_table *hl, size_t p, long beyond)
{
	static const int num[][2] = {{A_GPUS, H_GPUS}, {A_TPS, H_TPS}, {A_CS, H_CS},
				     {A_CS_LO, H_CS_LO}, {A_CS_HI, H_CS_HI}, {A_ES, H_ES},
				     {A_ES_LO, H_ES_LO}, {A_ES_HI, H_ES_HI}};
	static const int str[][2] = {{A_MODEL, H_MODEL}, {A_HW, H_HW}, {A_LAYOUT, H_LAYOUT},
				     {A_TOP, H_TOP}, {A_FLAGS, H_FLAGS}};
	char text[800];

	for (size_t c = 0; c < sizeof num / sizeof num[0]; c++)
		cvc_rep_table_set_num(t, (size_t)k, (size_t)num[c][0], rep_num(hl, p, num[c][1]));
	for (size_t c = 0; c < sizeof str / sizeof str[0]; c++)
		if (cvc_rep_table_set_str(t, (size_t)k, (size_t)str[c][0],
					  rep_cell_at(hl, p, (size_t)str[c][1])->s))
			return -1;
	if (beyond >= 0) {
		cvc_rep_table_set_num(t, (size_t)k, A_BEYOND, rep_num(hl, (size_t)beyond, H_GPUS));
		if (cvc_rep_table_set_str(t, (size_t)k, A_BEYOND_FLAGS,
					  rep_cell_at(hl, (size_t)beyond, H_FLAGS)->s))
			return -1;
	}
	cvc_rep_table_set_num(t, (size_t)k, A_REC, 0);
	advice_text(hl, p, beyond, text, sizeof text);
	return cvc_rep_table_set_str(t, (size_t)k, A_TEXT, text);
}

/*
 * advice: per model and hardware (headline order) the most GPUs whose best
 * layout carries no flag; per model, the row with the most tokens/s among
 * those without a flag (any row when all are flagged) is recommended.
 */
static int advice_table(const cvc_rep_table *hl, struct rep_tables *out)
{
	static const char *const cols[A_N] = {
		"model", "hw", "gpus", "layout", "tokens_per_s", "comm_share", "comm_share_lo",
		"comm_share_hi", "exposed_share", "exposed_share_lo", "exposed_share_hi",
		"top_exposed_type", "flags", "beyond_gpus", "beyond_flags", "recommended", "advice"};
	cvc_rep_table *t = cvc_rep_table_new("advice", "What to do: per model and hardware the "
					     "most GPUs whose best layout is not far from the best",
					     A_N, cols);
	int rc = t ? 0 : -1;

	for (size_t i = 0; !rc && i < hl->nrows; i++) {
		long beyond, k;
		size_t p = advised(hl, i, &beyond), j;

		/* one row per (model, hardware): its first headline row */
		for (j = 0; j < i && !(same_str(hl, i, j, H_MODEL) && same_str(hl, i, j, H_HW)); j++)
			;
		if (j < i)
			continue;
		k = cvc_rep_table_add_row(t);
		rc = k < 0 || advice_row(t, k, hl, p, beyond) ? -1 : 0;
	}
	/* the recommendation of each model */
	for (size_t i = 0; !rc && i < t->nrows; i++) {
		size_t best = i;
		int best_ok = 0;

		if (i && same_str(t, i, i - 1, A_MODEL))
			continue;
		for (size_t j = i; j < t->nrows && same_str(t, i, j, A_MODEL); j++) {
			const char *f = rep_cell_at(t, j, A_FLAGS)->s;
			int ok = !f || !*f;

			if ((ok && !best_ok) || (ok == best_ok && rep_num(t, j, A_TPS) >
								       rep_num(t, best, A_TPS))) {
				best = j;
				best_ok = ok;
			}
		}
		cvc_rep_table_set_num(t, best, A_REC, 1);
	}
	if (!rc)
		rc = rep_tables_take(out, &t);
	cvc_rep_table_free(t);
	return rc;
}

int rep_findings_tables(const cvc_rep_table *hl, const char *const *sync,
			struct rep_tables *out)
{
	return findings_table(hl, sync, out) || advice_table(hl, out) ? -1 : 0;
}
