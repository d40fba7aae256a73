/*
 * vcell.c - a numeric cell of a published table as people write it: the
 * number first, then what they had to say about it.  "8?", "14336 per
 * expert", "147 (up to)", "1024? (2M tokens)", "3072->15360 (ramp over
 * the first 469B tokens)", "~1543", "1,024", "8K", "45%".  The number is
 * read; what follows it is handed back as a remark for the column to give
 * a meaning or for the row to quote (vrow.c).  A cell that does not start
 * with a number is not one: NaN and inf are not numbers a run measured.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vrow.h"

/* Words before a number that qualify it, and the flag each sets. */
static const struct {
	const char *word;
	int approx, bound;
} qualifiers[] = {
	{"~", 1, 0},          {"\xE2\x89\x88", 1, 0}, /* U+2248 almost equal */
	{"approx.", 1, 0},    {"approx", 1, 0},       {"about", 1, 0},
	{"ca.", 1, 0},        {"circa", 1, 0},        {"up to", 0, 1},
	{"<=", 0, 1},         {">=", 0, -1},          {"\xE2\x89\xA4", 0, 1}, /* U+2264 */
	{"\xE2\x89\xA5", 0, -1}, /* U+2265 */          {"<", 0, 1},
	{">", 0, -1},         {"at least", 0, -1},    {"at most", 0, 1},
};

/* A ramp's arrow between two numbers ("3072->15360", "3072 → 15360"). */
static const char *const arrows[] = {"->", "=>", "\xE2\x86\x92" /* U+2192 */};

static const char *skip_space(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* Length of a prefix word at s (case-insensitive), 0 when s does not start
 * with it or it runs into a letter ("about" in "aboutx"). */
static size_t starts_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	if (strncasecmp(s, w, n))
		return 0;
	if (isalpha((unsigned char)w[n - 1]) && isalpha((unsigned char)s[n]))
		return 0;
	return n;
}

/*
 * The digits of a number at s copied into buf for strtod: "1,024,000"
 * grouped by thousands loses its commas; with decimal_comma (a
 * ';'-separated file) a comma is the decimal mark instead.  Returns the
 * bytes of s used, 0 when s does not start with a digit or '.'.
 */
static size_t number_text(const char *s, int decimal_comma, char *buf, size_t len,
			  int *was_grouped)
{
	size_t i = 0, o = 0;
	int grouped = 0;

	if (!isdigit((unsigned char)s[0]) && !(s[0] == '.' && isdigit((unsigned char)s[1])))
		return 0;
	while (o + 1 < len) {
		char c = s[i];

		if (isdigit((unsigned char)c) || c == '.') {
			buf[o++] = c;
			i++;
		} else if (c == ',' && decimal_comma && isdigit((unsigned char)s[i + 1])) {
			buf[o++] = '.';
			*was_grouped = 1;
			i++;
		} else if (c == ',' && !decimal_comma && isdigit((unsigned char)s[i + 1]) &&
			   isdigit((unsigned char)s[i + 2]) && isdigit((unsigned char)s[i + 3]) &&
			   !isdigit((unsigned char)s[i + 4]) && (grouped || o <= 3)) {
			/* "1,024": three digits after each comma, at most three
			 * before the first */
			grouped = 1;
			*was_grouped = 1;
			i++;
		} else if ((c == 'e' || c == 'E') &&
			   (isdigit((unsigned char)s[i + 1]) ||
			    ((s[i + 1] == '-' || s[i + 1] == '+') &&
			     isdigit((unsigned char)s[i + 2])))) {
			buf[o++] = c;
			buf[o++] = s[i + 1];
			i += 2;
		} else {
			break;
		}
	}
	buf[o] = 0;
	return i;
}

/* Copies the remark at s into n->remark: trimmed, one pair of enclosing
 * parentheses removed ("(up to)" -> "up to"). */
static void set_remark(struct vnum *n, const char *s)
{
	size_t len;
	char *r = n->remark;

	s = skip_space(s);
	snprintf(r, sizeof n->remark, "%s", s);
	len = strlen(r);
	while (len && isspace((unsigned char)r[len - 1]))
		r[--len] = 0;
	if (len >= 2 && r[0] == '(' && r[len - 1] == ')' && !strchr(r + 1, '(')) {
		memmove(r, r + 1, len - 2);
		r[len - 2] = 0;
	}
}

int vcell_number(const char *cell, int decimal_comma, struct vnum *n, const char **what)
{
	const char *s = skip_space(cell);
	char buf[96], *end;
	size_t used;
	double v;

	memset(n, 0, sizeof *n);
	n->to = NAN;
	for (size_t i = 0; i < sizeof qualifiers / sizeof qualifiers[0]; i++) {
		size_t w = starts_word(s, qualifiers[i].word);

		if (w) {
			n->approx = qualifiers[i].approx;
			n->bound = qualifiers[i].bound;
			snprintf(n->qualifier, sizeof n->qualifier, "%.*s", (int)w, s);
			s = skip_space(s + w);
			break;
		}
	}
	if (*s == '-' && (isdigit((unsigned char)s[1]) || s[1] == '.')) {
		*what = "a number >= 0";
		return -1;
	}
	if (*s == '+')
		s++;
	used = number_text(s, decimal_comma, buf, sizeof buf, &n->grouped);
	if (!used) {
		*what = "a number";
		return -1;
	}
	errno = 0;
	v = strtod(buf, &end);
	/* an underflow ("1e-320") is a tiny number, which the column's range
	 * refuses with its own words; an overflow is no number */
	if ((errno == ERANGE && fabs(v) >= 1) || *end || !isfinite(v)) {
		*what = "a finite number";
		return -1;
	}
	n->v = v;
	s += used;
	/* a unit letter written onto the number: 8K, 2M, 1.5T */
	if ((*s == 'K' || *s == 'k' || *s == 'M' || *s == 'B' || *s == 'T' || *s == 'G') &&
	    !isalpha((unsigned char)s[1])) {
		n->unit = (char)toupper((unsigned char)*s);
		s++;
	} else if (*s == '%') {
		n->unit = '%';
		s++;
	}
	s = skip_space(s);
	if (*s == '?') {
		n->guess = 1;
		s = skip_space(s + 1);
	}
	for (size_t i = 0; i < sizeof arrows / sizeof arrows[0]; i++) {
		size_t w = strlen(arrows[i]);
		char b2[96];
		const char *t;

		if (strncmp(s, arrows[i], w))
			continue;
		t = skip_space(s + w);
		used = number_text(t, decimal_comma, b2, sizeof b2, &n->grouped);
		if (!used)
			break;
		n->to = strtod(b2, &end);
		if (*end || !isfinite(n->to)) {
			*what = "a finite number";
			return -1;
		}
		s = skip_space(t + used);
		if (*s == '?') {
			n->guess = 1;
			s++;
		}
		break;
	}
	set_remark(n, s);
	/* a '?' closing the remark is the transcriber's too: "1024 (2M tokens)?" */
	{
		size_t len = strlen(n->remark);

		if (len && n->remark[len - 1] == '?' && !strchr(n->remark, '(')) {
			n->guess = 1;
			n->remark[len - 1] = 0;
			set_remark(n, n->remark);
		}
	}
	return 0;
}

/*
 * The numbers of a remark with the word each carries, for the cells that
 * list several values: "dense/2048 per expert", "+1 shared", "(+2
 * shared)".  Fills at most max labels; returns how many.
 */
size_t vcell_labels(const char *text, struct vlabel *out, size_t max)
{
	size_t k = 0;
	const char *s = text;

	while (*s && k < max) {
		char buf[96], *end;
		size_t used;
		const char *w;

		if (!isdigit((unsigned char)*s) || (s > text && isalnum((unsigned char)s[-1]))) {
			s++;
			continue;
		}
		{
			int grouped = 0;

			used = number_text(s, 0, buf, sizeof buf, &grouped);
		}
		out[k].v = strtod(buf, &end);
		w = skip_space(s + used);
		/* the label: the words up to the next separator */
		{
			size_t n = strcspn(w, "/,;+()0123456789");

			while (n && isspace((unsigned char)w[n - 1]))
				n--;
			snprintf(out[k].word, sizeof out[k].word, "%.*s", (int)n, w);
			vtext_lower(out[k].word, sizeof out[k].word, out[k].word);
		}
		out[k].pos = (size_t)(s - text);
		k++;
		s += used ? used : 1;
	}
	return k;
}
