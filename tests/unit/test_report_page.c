/*
 * test_report_page.c - every number on the page says what it means (issue
 * 35): the headline's shares are parts of the step of the row they come
 * from, a chart's whisker is the interval the table prints for the same
 * cell, each hardware keeps one colour on every chart, hardware is ordered
 * by generation, and the answer (every GPU count, the sentences, what to
 * do) ends within the first screen.  The page is the projector's own
 * output (`cvc project scaling2023.yaml --top 2`, the study shipped until
 * the shipped one asked about the next racks: 5 models x 5 hardware x 5
 * GPU counts), read by its own self-check in headless Chromium.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>

#include "cvc/cvc_report.h"
#include "testutil.h"

/* The page every test reads, made once per test. */
struct page {
	char dir[4096], csv[4200], html[4200], tables[4200];
};

static void make_page(struct page *pg)
{
	char args[16384], *err = NULL;

	snprintf(pg->dir, sizeof pg->dir, "%s", tu_tmpdir());
	snprintf(pg->csv, sizeof pg->csv, "%s/p.csv", pg->dir);
	snprintf(pg->html, sizeof pg->html, "%s/r.html", pg->dir);
	snprintf(pg->tables, sizeof pg->tables, "%s/t", pg->dir);
	snprintf(args, sizeof args,
		 "project '" CVC_SOURCE_DIR "/projector/studies/scaling2023.yaml' --top 2 --csv '%s'",
		 pg->csv);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof args, "report --no-db -p '%s' -o '%s' --csv-dir '%s'", pg->csv,
		 pg->html, pg->tables);
	cr_assert_eq(tu_cvc(args, NULL, &err), 0, "%s", err);
	free(err);
}

static cvc_rep_table *read_table(const char *dir, const char *name)
{
	char path[4400], err[512];
	cvc_rep_table *t = NULL;

	snprintf(path, sizeof path, "%s/%s.csv", dir, name);
	cr_assert_eq(cvc_rep_table_read(path, &t, err, sizeof err), CVC_OK, "%s", err);
	return t;
}

static double num(const cvc_rep_table *t, size_t r, const char *col)
{
	long c = cvc_rep_table_find(t, col);

	cr_assert_geq(c, 0, "no column %s", col);
	return cvc_rep_table_num(t, r, (size_t)c);
}

static const char *str(const cvc_rep_table *t, size_t r, const char *col)
{
	long c = cvc_rep_table_find(t, col);

	cr_assert_geq(c, 0, "no column %s", col);
	return cvc_rep_table_str(t, r, (size_t)c);
}

/* "communication is 65% of the step" was comm / (compute + comm): the
 * headline's share is comm_s / step_s of the scenario row it names, and
 * its interval is that row's comm_share_lo/hi. */
Test(report_page, headline_shares_are_parts_of_the_step)
{
	struct page pg;
	cvc_rep_table *hl, *sc;
	size_t checked = 0;

	make_page(&pg);
	hl = read_table(pg.tables, "headline");
	sc = read_table(pg.dir, "p");
	cr_assert_eq(cvc_rep_table_nrows(hl), 5 * 5 * 5, "%zu", cvc_rep_table_nrows(hl));
	for (size_t i = 0; i < cvc_rep_table_nrows(hl); i++) {
		double idx = num(hl, i, "scenario");
		size_t r;

		for (r = 0; r < cvc_rep_table_nrows(sc) && num(sc, r, "index") != idx; r++)
			;
		cr_assert_lt(r, cvc_rep_table_nrows(sc), "scenario %g", idx);
		cr_assert_float_eq(num(hl, i, "comm_share"), num(sc, r, "comm_s") / num(sc, r, "step_s"),
				   1e-5 * num(hl, i, "comm_share"), "row %zu", i);
		cr_assert_float_eq(num(hl, i, "exposed_share"),
				   num(sc, r, "exposed_s") / num(sc, r, "step_s"),
				   1e-5 * num(hl, i, "exposed_share") + 1e-9, "row %zu", i);
		cr_assert_float_eq(num(hl, i, "comm_share_lo"), num(sc, r, "comm_share_lo"), 1e-12);
		cr_assert_float_eq(num(hl, i, "exposed_share_hi"), num(sc, r, "exposed_share_hi"),
				   1e-12);
		checked++;
	}
	cr_log_info("%zu headline rows are comm_s / step_s of their scenario", checked);
	cvc_rep_table_free(hl);
	cvc_rep_table_free(sc);
}

/* Hardware oldest first everywhere: the hardware table by catalog peak,
 * and the heat map's rows in that order (it sorted names: H100 after B200). */
Test(report_page, hardware_in_generation_order)
{
	static const char *const want[] = {"A100-SXM-80GB", "H100-SXM", "B200",
					   "B200 compute x2 hbm_bw x2", "B200 compute x4 hbm_bw x4"};
	struct page pg;
	cvc_rep_table *hw, *hm;
	size_t k = 0;

	make_page(&pg);
	hw = read_table(pg.tables, "hardware");
	hm = read_table(pg.tables, "exposed_heatmap");
	cr_assert_eq(cvc_rep_table_nrows(hw), 5);
	for (size_t i = 0; i < 5; i++)
		cr_assert_str_eq(str(hw, i, "hw"), want[i]);
	for (size_t i = 0; i < cvc_rep_table_nrows(hm); i++) {
		while (k < 5 && strcmp(str(hm, i, "hw"), want[k]) != 0)
			k++;
		cr_assert_lt(k, 5, "heat map row %zu (%s) out of generation order", i,
			     str(hm, i, "hw"));
	}
	cvc_rep_table_free(hw);
	cvc_rep_table_free(hm);
}

/* ---- in a browser ------------------------------------------------------------- */

/* The DOM of html as a 1400x900 browser with no network leaves it. */
static char *dom(const char *html)
{
	char cmd[8192], *out = NULL;
	const char *prof = tu_tmpdir();
	int rc;

	snprintf(cmd, sizeof cmd,
		 "timeout -k 10 180 '%s' --headless --no-sandbox --disable-gpu --disable-quic "
		 "--no-first-run --disable-background-networking --disable-component-update "
		 "--disable-sync --user-data-dir='%s' --virtual-time-budget=8000 "
		 "--window-size=1400,900 --proxy-server=127.0.0.1:9 "
		 "--host-resolver-rules='MAP * ~NOTFOUND' --dump-dom 'file://%s'",
		 tu_chromium(), prof, html);
	rc = tu_run(cmd, &out, NULL);
	cr_assert(rc != 124 && rc != 128 + SIGKILL, "chromium did not finish on %s", html);
	return out ? out : strdup("");
}

/* The text between "<pre id=\"ID\"" and "</pre>", or "(none)". */
static char *pre(const char *d, const char *marker)
{
	const char *s = strstr(d, marker), *e = s ? strstr(s, "</pre>") : NULL;

	return s && e ? strndup(s, (size_t)(e - s)) : strdup("(none)");
}

/* A copy of the page with extra before "</body>". */
static char *tamper(const struct page *pg, const char *name, const char *extra)
{
	char *html = tu_read(pg->html, NULL), *at, *path = malloc(4400);
	FILE *f;

	cr_assert(html && path);
	snprintf(path, 4400, "%s/%s", pg->dir, name);
	at = strstr(html, "</body>");
	cr_assert(at);
	f = fopen(path, "w");
	cr_assert(f);
	fwrite(html, 1, (size_t)(at - html), f);
	fputs(extra, f);
	fputs(at, f);
	cr_assert_eq(fclose(f), 0);
	free(html);
	return path;
}

/* The page's own check, then one spoiled copy that must fail naming why. */
static void verdict_and_tamper(const struct page *pg, const char *want, const char *file,
			       const char *snippet, const char *why)
{
	char *d = dom(pg->html), *v = pre(d, "CVC-SELFCHECK"), *bad;

	cr_assert(strstr(v, "CVC-SELFCHECK PASS"), "%s", v);
	cr_assert(strstr(v, want), "want '%s' in: %s", want, v);
	free(v);
	free(d);
	bad = tamper(pg, file, snippet);
	d = dom(bad);
	v = pre(d, "CVC-SELFCHECK");
	cr_assert(strstr(v, "CVC-SELFCHECK FAIL") && strstr(v, why), "%s: %s", file, v);
	free(v);
	free(d);
	free(bad);
}

/* "Exposed communication by type" divided exposed_s_hi by the nominal step
 * (a whisker at 1.09 of the step where the table said 36-100%): every
 * whisker is now the interval the headline table prints for the same
 * model, hardware and GPU count, in number and in text. */
Test(report_page, whiskers_are_the_table_intervals, .timeout = 400)
{
	struct page pg;

	if (!tu_chromium())
		cr_skip_test("chromium is not installed (apt-get install chromium)");
	make_page(&pg);
	/* 5 models x 5 hardware at the picked count, none disagreeing */
	verdict_and_tamper(&pg, " intervals=25:0 ", "iv.html",
			   "<script>document.querySelectorAll('#headline-table td.iv').forEach("
			   "function(td){td.textContent='50% (1\\u20132%)';});</script>",
			   "the table says");
}

/* Reads, after every GPU-count, model and view picker has been through
 * each of its choices, the colours each hardware's series were drawn in
 * on every chart, into <pre id="probe">hw=colour,colour;...</pre>. */
#define PROBE \
	"<script>window.addEventListener('load',function(){setTimeout(function(){" \
	"var D=JSON.parse(document.getElementById('cvc-data').textContent),t=D.tables.headline," \
	"c=t.columns.indexOf('hw'),hw=t.rows.map(function(r){return t.dict&&t.dict.hw?" \
	"t.dict.hw[r[c]]:r[c];});" \
	"var seen={};function look(){Object.keys(Chart.instances).forEach(function(k){" \
	"Chart.instances[k].data.datasets.forEach(function(d){" \
	"var h=String(d.label).replace(/ (ideal|exposed)$/,'');if(hw.indexOf(h)<0)return;" \
	"(seen[h]=seen[h]||{})[String(d.borderColor||d.backgroundColor).toLowerCase()]=1;});});}" \
	"look();document.querySelectorAll('select').forEach(function(s){" \
	"Array.prototype.forEach.call(s.options,function(o){s.value=o.value;" \
	"s.dispatchEvent(new Event('change'));look();});});" \
	"var p=document.createElement('pre');p.id='probe';p.textContent='PROBE '+" \
	"Object.keys(seen).map(function(h){return h+'='+Object.keys(seen[h]).join(',');})" \
	".join(';');document.body.appendChild(p);},50);});</script>"

/* H100 was green in one chart and the next colour in another: with every
 * picker run through, each hardware is drawn in exactly one colour. */
Test(report_page, one_colour_per_hardware, .timeout = 400)
{
	struct page pg;
	char *probe, *d, *p, *item, *semi;
	int n = 0;

	if (!tu_chromium())
		cr_skip_test("chromium is not installed (apt-get install chromium)");
	make_page(&pg);
	probe = tamper(&pg, "probe.html", PROBE);
	d = dom(probe);
	p = pre(d, "<pre id=\"probe\">PROBE ");
	cr_assert(strcmp(p, "(none)") != 0, "the probe did not run");
	for (item = p + strlen("<pre id=\"probe\">PROBE "); item; item = semi ? semi + 1 : NULL) {
		semi = strchr(item, ';');
		if (semi)
			*semi = '\0';
		cr_assert_null(strchr(item, ','), "one hardware in two colours: %s", item);
		n++;
	}
	cr_assert_eq(n, 5, "%s", p);
	free(p);
	free(d);
	free(probe);
	/* the page's own check says the same, and fails a second colour */
	verdict_and_tamper(&pg, " hw=5:0", "hw.html",
			   "<script>window.addEventListener('load',function(){var c="
			   "document.createElement('canvas');document.body.appendChild(c);"
			   "new Chart(c,{type:'line',data:{labels:['a','b'],datasets:[{label:'H100-SXM',"
			   "cvcHw:'H100-SXM',borderColor:'#123456',data:[1,2]}]}});});</script>",
			   "hardware H100-SXM drawn in 2 colours");
}

/* The first screen answered one GPU count: now every count of the study is
 * charted on it and the answer (sentences, what to do) ends above the fold. */
Test(report_page, answer_covers_every_count_above_the_fold, .timeout = 400)
{
	struct page pg;

	if (!tu_chromium())
		cr_skip_test("chromium is not installed (apt-get install chromium)");
	make_page(&pg);
	verdict_and_tamper(&pg, "counts:5/5,", "fold.html",
			   "<script>var d=document.createElement('div');d.style.height='900px';"
			   "var a=document.getElementById('advice');a.parentNode.insertBefore(d,a);"
			   "</script>",
			   "below the first screen");
}

/* The best-layout table in view at 1400 px: the shipped study's scaled
 * GPU ("gb300-nvl72 compute x3.3 hbm_bw x1.6 intra_bw x2 inter_bw x2")
 * did not wrap and pushed the next-generation columns behind a scroll bar
 * (1509 px of table in 1278 px).  A page whose cells do not wrap fails. */
Test(report_page, answer_table_in_view_at_1400px, .timeout = 400)
{
	struct page pg;

	if (!tu_chromium())
		cr_skip_test("chromium is not installed (apt-get install chromium)");
	make_page(&pg);
	verdict_and_tamper(&pg, "CVC-SELFCHECK PASS", "wide.html",
			   "<style>table.headline td, table.headline th"
			   "{white-space:nowrap !important}</style>"
			   "<script>document.addEventListener('DOMContentLoaded',function(){"
			   "var h=document.querySelector('#headline-table td.hw');"
			   "if(h)h.textContent+=' compute x3.3 hbm_bw x1.6 intra_bw x2 inter_bw x2';});"
			   "</script>",
			   "columns cut off");
}
