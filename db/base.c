/*
 * base.c - growable memory and the number parser every room shares
 * (cvc_base.h).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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
