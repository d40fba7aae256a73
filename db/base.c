/*
 * base.c - growable memory and the number parser every room shares
 * (cvc_base.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_base.h"

/* The growth both cvc_grow and cvc_grow_bounded are: doubling, at most max. */
static cvc_status grow_to(void *arrp, size_t *cap, size_t need, size_t elem, size_t first,
			  size_t max)
{
	size_t ncap = *cap ? *cap : (first ? first : 1);
	void *old, *nw;

	if (need <= *cap)
		return CVC_OK;
	if (need > max)
		return CVC_ERR_NOMEM;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return CVC_ERR_NOMEM;
		ncap *= 2;
	}
	if (ncap > max)
		ncap = max;
	if (elem && ncap > SIZE_MAX / elem)
		return CVC_ERR_NOMEM;
	/* The pointer is read and written as bytes: arrp may point at any T *. */
	memcpy(&old, arrp, sizeof old);
	nw = realloc(old, ncap * elem);
	if (!nw)
		return CVC_ERR_NOMEM;
	memcpy(arrp, &nw, sizeof nw);
	*cap = ncap;
	return CVC_OK;
}

cvc_status cvc_grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first)
{
	return grow_to(arrp, cap, need, elem, first, SIZE_MAX);
}

cvc_status cvc_grow_bounded(void *arrp, size_t *cap, size_t need, size_t elem, size_t max)
{
	return grow_to(arrp, cap, need, elem, 64, max);
}

cvc_status cvc_buf_add(cvc_buf *b, const void *bytes, size_t n)
{
	cvc_status st;

	if (n > b->max || b->len > b->max - n)
		return CVC_ERR_FORMAT;
	/* +1 for the NUL; max + 1 cannot overflow once len + n <= max held. */
	st = cvc_grow(&b->p, &b->cap, b->len + n + 1, 1, 64);
	if (st != CVC_OK)
		return st;
	if (n)
		memcpy(b->p + b->len, bytes, n);
	b->len += n;
	b->p[b->len] = '\0';
	return CVC_OK;
}

cvc_status cvc_buf_addc(cvc_buf *b, char c)
{
	return cvc_buf_add(b, &c, 1);
}

void cvc_buf_reset(cvc_buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

const char *cvc_buf_str(const cvc_buf *b)
{
	return b->p ? b->p : "";
}

void cvc_buf_free(cvc_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int cvc_str_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int cvc_str_in_list(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p;) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && memcmp(p, word, n) == 0)
			return 1;
		p += len + (bar ? 1 : 0);
	}
	return 0;
}

cvc_status cvc_errf(char *err, size_t errlen, cvc_status st, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return st;
}

/* Past the blanks after a parsed number: the text must end there. */
static const char *skip_blanks(const char *end)
{
	while (*end && isspace((unsigned char)*end))
		end++;
	return end;
}

cvc_status cvc_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *skip_blanks(end) || v < lo || v > hi)
		return CVC_ERR_FORMAT;
	*out = v;
	return CVC_OK;
}

cvc_status cvc_parse_f64(const char *s, double *out)
{
	char *end = NULL;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *skip_blanks(end) || !isfinite(v))
		return CVC_ERR_FORMAT;
	*out = v;
	return CVC_OK;
}

int cvc_utf8_len(const unsigned char *s)
{
	unsigned c = s[0], cp;
	int n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/* The code point of the k-byte character at s (valid UTF-8). */
static unsigned code_point(const unsigned char *s, int k)
{
	static const unsigned char mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	unsigned cp = s[0] & mask[k];

	for (int i = 1; i < k; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

static int shown_escaped(unsigned cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0x2028 || cp == 0x2029;
}

/*
 * The safe form of the character at s into out (at most 7 bytes, not
 * terminated); *used receives the input bytes it stands for.  Returns the
 * bytes written.
 */
static size_t safe_char(const unsigned char *s, int keep_lines, char *out, size_t *used)
{
	static const char hex[] = "0123456789abcdef";
	int k = cvc_utf8_len(s);
	unsigned cp;

	if (k == 0) {
		*used = 1;
		memcpy(out, "\xef\xbf\xbd", 3);
		return 3;
	}
	*used = (size_t)k;
	if (k == 1 && keep_lines && (s[0] == '\t' || s[0] == '\n' || s[0] == '\r')) {
		out[0] = (char)s[0];
		return 1;
	}
	if (k == 1 && (s[0] < 0x20 || s[0] == 0x7f)) {
		out[0] = '\\', out[1] = 'x', out[2] = hex[s[0] >> 4], out[3] = hex[s[0] & 15];
		return 4;
	}
	cp = code_point(s, k);
	if (!shown_escaped(cp)) {
		memcpy(out, s, (size_t)k);
		return (size_t)k;
	}
	out[0] = '\\', out[1] = 'u';
	for (int i = 0; i < 4; i++)
		out[2 + i] = hex[(cp >> (12 - 4 * i)) & 15];
	return 6;
}

const char *cvc_text_safe(const char *s, int keep_lines, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p) {
		char ch[8];
		size_t used, n = safe_char(p, keep_lines, ch, &used);

		if (o + n + 1 > cap)
			break;
		memcpy(out + o, ch, n);
		o += n;
		p += used;
	}
	out[o] = '\0';
	return out;
}

char *cvc_text_safe_dup(const char *s, int keep_lines)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	char *d;

	while (*p) {
		char ch[8];
		size_t used;

		n += safe_char(p, keep_lines, ch, &used);
		p += used;
	}
	d = malloc(n + 1);
	return d ? (char *)cvc_text_safe(s, keep_lines, d, n + 1) : NULL;
}

/* Drops the trailing zeros of a fraction, and its point when nothing is left. */
static void trim_zeros(char *s)
{
	char *dot = strchr(s, '.'), *e;

	if (!dot)
		return;
	e = s + strlen(s);
	while (e > dot + 1 && e[-1] == '0')
		*--e = '\0';
	if (e == dot + 1)
		*dot = '\0';
}

/*
 * "%.*f" of v with trim_zeros() applied, without printf where the answer
 * is certain: printf rounds v's exact binary value through multi-precision
 * arithmetic, the cost of a projection's CSV (211 cells a row).  Here v
 * times 10^decimals is rounded in doubles: below 2^30 that product is off
 * the exact one by under 2^-23, so it rounds alike unless the exact one
 * lies within that of a half (then 0 and printf decides).  With no
 * decimals there is no product: v's whole part and fraction are exact up
 * to 2^64 (a model's FLOPs, a run's tokens), and only an exact half is
 * printf's (it rounds to even).  Returns the length written, 0 when printf
 * must do it.
 */
static size_t fixed_fast(double v, int decimals, char *out)
{
	static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
	double x, fl, fr;
	uint64_t n;
	char d[24];
	int k = 0, w = decimals;
	size_t o = 0;

	if (decimals > 9)
		return 0;
	x = fabs(v) * p10[decimals];
	if (!(x < (decimals ? 1073741824.0 : 18446744073709551616.0)))
		return 0;
	fl = floor(x);
	fr = x - fl;
	if (decimals ? fabs(fr - 0.5) < 1e-6 : fr == 0.5)
		return 0;
	n = (uint64_t)fl + (fr > 0.5);
	if (n == 0)
		return 0; /* "0", "-0" or "0.000": printf's words for them */
	/* the fraction's trailing zeros go (trim_zeros()), then its digits
	 * and the whole part's, last first, at least one whole digit */
	while (w > 0 && n % 10 == 0) {
		n /= 10;
		w--;
	}
	do
		d[k++] = (char)('0' + n % 10);
	while ((n /= 10) > 0 || k <= w);
	if (v < 0)
		out[o++] = '-';
	while (k > w)
		out[o++] = d[--k];
	if (w > 0) {
		out[o++] = '.';
		while (k > 0)
			out[o++] = d[--k];
	}
	out[o] = '\0';
	return o;
}

const char *cvc_fmt_plain(double v, int sig, char *buf, size_t len)
{
	double a = fabs(v);
	int decimals;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!isfinite(v))
		return buf;
	if (sig < 1)
		sig = 1;
	if (sig > 17)
		sig = 17;
	if (a == 0) { /* "0" for -0 too */
		if (len > 1) {
			buf[0] = '0';
			buf[1] = '\0';
		}
		return buf;
	}
	/* digits after the point that keep sig significant ones; none past the
	   units (a large number keeps all its integer digits), at most 30 */
	decimals = sig - 1 - (int)floor(log10(a));
	if (decimals < 0)
		decimals = 0;
	if (decimals > 30)
		decimals = 30;
	{
		char f[40];
		size_t n = fixed_fast(v, decimals, f);

		if (n > 0 && n < len) {
			memcpy(buf, f, n + 1);
			return buf;
		}
	}
	snprintf(buf, len, "%.*f", decimals, v);
	trim_zeros(buf);
	if (strcmp(buf, "-0") == 0)
		snprintf(buf, len, "0");
	return buf;
}

const char *cvc_fmt_whole(double v, char *buf, size_t len)
{
	char f[40];
	size_t n;

	if (!len)
		return buf;
	n = isfinite(v) ? fixed_fast(v, 0, f) : 0;
	if (v == 0 && !signbit(v) && len > 1) /* +0: the flags of a CSV row, mostly */
		memcpy(buf, "0", 2);
	else if (n > 0 && n < len)
		memcpy(buf, f, n + 1);
	else
		snprintf(buf, len, "%.0f", v);
	return buf;
}

const char *cvc_fmt_readable(double v, char *buf, size_t len)
{
	char d[64], *p;
	double a = fabs(v), r;
	size_t n, o = 0, digits;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (!isfinite(v))
		return buf;
	if (a < 1000 && v != floor(v)) {
		/* 3 significant figures, zeros kept: 0.99956 reads "1.00", not "1" */
		int decimals = 2 - (int)floor(log10(a));

		if (decimals > 30)
			decimals = 30;
		snprintf(buf, len, "%.*f", decimals < 0 ? 0 : decimals, v);
		return buf;
	}
	/* an integer keeps its digits; a larger measure is rounded to 3 */
	r = v;
	if (v != floor(v)) {
		double m = pow(10, floor(log10(a)) - 2);

		r = round(v / m) * m;
	}
	snprintf(d, sizeof d, "%.0f", fabs(r));
	n = strlen(d);
	p = d;
	if (r < 0 && o + 1 < len)
		buf[o++] = '-';
	for (digits = 0; digits < n && o + 1 < len; digits++) {
		if (digits && (n - digits) % 3 == 0 && o + 2 < len)
			buf[o++] = ',';
		buf[o++] = p[digits];
	}
	buf[o] = '\0';
	return buf;
}

void cvc_shares_of(double step, double compute, double comm, double exposed, cvc_shares *out)
{
	out->comm_share = step > 0 ? comm / step : NAN;
	out->exposed_share = step > 0 ? exposed / step : NAN;
	out->comm_to_compute = compute > 0 ? comm / compute : NAN;
}
