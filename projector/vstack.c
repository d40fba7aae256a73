/*
 * vstack.c - the software stack a published row ran, read from its source
 * and notes: which framework (Megatron-DeepSpeed, Megatron-LM, NeMo,
 * Megatron-Bridge, NeMo AutoModel, llm-foundry, torchtitan, DeepSpeed, a
 * JAX stack) and
 * when (a release such as "NeMo 24.07" or "Release 26.06 NeMo container",
 * a date, an arXiv number).  The stack decides what a row that does not
 * say was running: a feature is assumed only where that stack had it at
 * that date (vrow.c; the dates and their sources are in docs/SCENARIOS.md
 * "validate").
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vrow.h"

/* The stacks by the words that name them; the first rule that matches
 * wins, so a fork is found before the project it forked
 * ("Megatron-DeepSpeed" before "Megatron", "Megatron-Bridge" and NeMo
 * AutoModel before "NeMo", whose organisation they live in). */
static const struct {
	int family;
	const char *name, *words;
} stacks[] = {
	{VS_MEGATRON_DS, "Megatron-DeepSpeed",
	 "megatron-deepspeed|megatron deepspeed|megatron_deepspeed|bloom|bigscience|mt-nlg|"
	 "mt nlg|megatron-turing|megatron turing"},
	{VS_BRIDGE, "Megatron-Bridge", "megatron-bridge|megatron bridge|megatron_bridge"},
	/* NeMo's PyTorch backend (FSDP2, no Megatron-Core), in NeMo's name */
	{VS_AUTOMODEL, "NeMo AutoModel", "automodel|nemo_automodel"},
	{VS_NEMO, "NeMo", "nemo"},
	{VS_FOUNDRY, "llm-foundry", "llm-foundry|llm foundry|llm_foundry|mosaicml|composer"},
	{VS_TORCHTITAN, "torchtitan", "torchtitan"},
	{VS_JAX, "a JAX stack", "maxtext|paxml|pax|t5x|praxis|jax"},
	{VS_DEEPSPEED, "DeepSpeed", "deepspeed"},
	{VS_MEGATRON_LM, "Megatron-LM",
	 "megatron-lm|megatron lm|megatron-core|megatron core|mcore|megatron"},
};

static const char *const months[] = {"jan", "feb", "mar", "apr", "may", "jun",
				     "jul", "aug", "sep", "oct", "nov", "dec"};

/* Keeps date (y, m) in st when later than what it holds. */
static void keep(struct vstack *st, int y, int m, const char *p, size_t n)
{
	if (y < 2015 || y > 2040 || m < 0 || m > 12)
		return;
	if (y * 13 + m <= st->year * 13 + st->month)
		return;
	st->year = y;
	st->month = m;
	snprintf(st->date_from, sizeof st->date_from, "%.*s", (int)(n < 47 ? n : 47), p);
}

/* Two digits at p as a number, -1 when p does not start with two digits
 * followed by a non-digit. */
static int two(const char *p)
{
	return isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) &&
			       !isdigit((unsigned char)p[2])
		       ? (p[0] - '0') * 10 + (p[1] - '0')
		       : -1;
}

/*
 * The latest date the text gives: "2024-04", "2024", "Jan 2024", a
 * container release "24.07" after "nemo" / "release" / "container" / "v",
 * an arXiv number "2104.04473" (year and month of submission).
 */
/* The month named by the word that ends right before p ("jan 2024",
 * "January, 2024"): 1..12, 0 when none. */
static int month_before(const char *t, const char *p)
{
	const char *e = p, *b;

	while (e > t && (e[-1] == ' ' || e[-1] == '.' || e[-1] == ','))
		e--;
	b = e;
	while (b > t && isalpha((unsigned char)b[-1]))
		b--;
	if (e - b < 3)
		return 0;
	for (int m = 0; m < 12; m++)
		if (!strncmp(b, months[m], 3))
			return m + 1;
	return 0;
}

/*
 * The latest date the text gives: "2024-04", "2024", "Jan 2024", a
 * container release "24.07" after "nemo" / "release" / "container" / "v",
 * an arXiv number "2104.04473" (year and month of submission).  Only
 * digits start a date, so the scan costs a test per byte.
 */
static void dates(const char *t, struct vstack *st)
{
	static const char *const release[] = {"nemo ", "release ", "container ", "releases v",
					      "nemo:", "nemo", "v", "r"};

	for (const char *p = t; *p; p++) {
		int word;

		if (!isdigit((unsigned char)*p))
			continue;
		word = p == t || !isalnum((unsigned char)p[-1]);
		/* a container release: "nemo 24.07", "release 26.06", "v25.02" */
		if (two(p) >= 18 && p[2] == '.' && two(p + 3) >= 1 && two(p + 3) <= 12)
			for (size_t i = 0; i < sizeof release / sizeof release[0]; i++) {
				size_t n = strlen(release[i]);

				if ((size_t)(p - t) >= n && !strncmp(p - n, release[i], n) &&
				    ((size_t)(p - t) == n || !isalnum((unsigned char)p[-(long)n - 1]))) {
					keep(st, 2000 + two(p), two(p + 3), p - n, n + 5);
					break;
				}
			}
		if (!word)
			continue;
		/* arXiv YYMM.NNNNN: the year and month it was submitted */
		if (p - t >= 6 && (!strncmp(p - 6, "arxiv ", 6) || !strncmp(p - 6, "arxiv:", 6)) &&
		    strspn(p, "0123456789") == 4 && p[4] == '.') {
			keep(st, 2000 + (p[0] - '0') * 10 + (p[1] - '0'), (p[2] - '0') * 10 + (p[3] - '0'),
			     p - 6, 16);
		} else if (p[0] == '2' && p[1] == '0' && two(p + 2) >= 0) {
			/* 20YY, 20YY-MM, "Jan 2024" */
			int y = 2000 + two(p + 2), m = 0;

			if (p[4] == '-' && two(p + 5) >= 1 && two(p + 5) <= 12)
				m = two(p + 5);
			else
				m = month_before(t, p);
			keep(st, y, m, p, m ? 7 : 4);
		}
		while (isdigit((unsigned char)p[1]))
			p++;
	}
}

int vstack_read(const char *t, struct vstack *st)
{
	memset(st, 0, sizeof *st);
	for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++) {
		const char *w = stacks[i].words;

		while (*w) {
			const char *bar = strchr(w, '|');
			size_t n = bar ? (size_t)(bar - w) : strlen(w);

			if (vtext_find_n(t, w, n)) {
				st->family = stacks[i].family;
				st->name = stacks[i].name;
				snprintf(st->word, sizeof st->word, "%.*s", (int)n, w);
				goto found;
			}
			w += n + (bar ? 1 : 0);
		}
	}
found:
	dates(t, st);
	return st->family ? 0 : -1;
}

int vstack_megatron(const struct vstack *st)
{
	return st->family == VS_MEGATRON_LM || st->family == VS_MEGATRON_DS ||
	       st->family == VS_NEMO || st->family == VS_BRIDGE;
}

int vstack_before(const struct vstack *st, int year, int month)
{
	return st->year > 0 && st->year * 13 + (st->month ? st->month : 12) < year * 13 + month;
}

int vstack_within(const struct vstack *st, int from_y, int from_m, int to_y, int to_m)
{
	return !vstack_before(st, from_y, from_m) &&
	       (to_y == 0 || vstack_before(st, to_y + (to_m == 12), to_m % 12 + 1));
}
