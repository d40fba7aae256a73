/*
 * json_scan.c - see json_scan.h.  The extent scan is the hot loop of the
 * Kineto importer: most of a trace's bytes belong to events that are
 * skipped, so it looks only at quotes and brackets, jumping over string
 * bodies with memchr.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "json_scan.h"

struct js_src {
	gzFile gz;
	char *buf;          /* cap + 1 bytes; buf[len] is always a NUL sentinel */
	size_t cap, len, pos;
	size_t mark;        /* bytes before mark may be dropped on refill */
	size_t max_cap;
	int64_t base;       /* stream offset of buf[0] */
	int64_t raw_size;
	int eof;
	cvc_status st;
	char err[512];
};

#define JS_CHUNK ((size_t)4 << 20)
/* Slack after the sentinel so 16-byte loads near the end stay in bounds. */
#define JS_PAD 64

/* Byte classes of the extent scan; 0 is "nothing to do". */
enum { C_PLAIN = 0, C_QUOTE, C_OPEN, C_CLOSE, C_NUL };

static const unsigned char cls[256] = {
	['\0'] = C_NUL, ['"'] = C_QUOTE, ['{'] = C_OPEN, ['['] = C_OPEN,
	['}'] = C_CLOSE, [']'] = C_CLOSE,
};

/*
 * First byte at or after q that the extent scan must look at: a quote, a
 * bracket or a NUL (the sentinel at buf[len] guarantees one).  Sixteen bytes
 * at a time where SSE2 exists: pretty-printed traces are mostly blanks and
 * short tokens between strings.
 */
static inline const unsigned char *skip_plain(const unsigned char *q)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), nul = _mm_setzero_si128();
	const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
	const __m128i lower = _mm_set1_epi8(0x20);

	for (;;) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)q);
		/* '[' | 0x20 == '{' and ']' | 0x20 == '}'; no other byte maps there. */
		__m128i y = _mm_or_si128(x, lower);
		__m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote),
						      _mm_cmpeq_epi8(x, nul)),
					 _mm_or_si128(_mm_cmpeq_epi8(y, open),
						      _mm_cmpeq_epi8(y, close)));
		int mask = _mm_movemask_epi8(m);

		if (mask)
			return q + __builtin_ctz((unsigned)mask);
		q += 16;
	}
#else
	while (cls[*q] == C_PLAIN)
		q++;
	return q;
#endif
}

static int is_ws(int c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* A source with its buffer and nothing to read from yet. */
static cvc_status js_new(size_t max_value, js_src **out, char *err, size_t errlen)
{
	js_src *s;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return CVC_ERR_NOMEM;
	}
	s->cap = JS_CHUNK;
	s->max_cap = max_value < JS_CHUNK ? JS_CHUNK : max_value;
	s->buf = malloc(s->cap + JS_PAD);
	if (!s->buf) {
		free(s);
		snprintf(err, errlen, "out of memory");
		return CVC_ERR_NOMEM;
	}
	memset(s->buf, 0, 16);
	*out = s;
	return CVC_OK;
}

cvc_status js_open(const char *path, size_t max_value, js_src **out, char *err,
		   size_t errlen)
{
	js_src *s;
	struct stat sb;
	cvc_status st;

	if ((st = js_new(max_value, out, err, errlen)))
		return st;
	s = *out;
	s->gz = gzopen(path, "rb");
	if (!s->gz) {
		int e = errno;

		snprintf(err, errlen, "'%s': cannot open: %s", path,
			 e ? strerror(e) : "out of memory");
		js_close(s);
		*out = NULL;
		return e ? cvc_open_status(e) : CVC_ERR_NOMEM;
	}
	/* A large input buffer keeps read(2) calls few; zlib inflates straight
	   into our buffer because our reads are larger than its own. */
	gzbuffer(s->gz, 1 << 18);
	s->raw_size = stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
	return CVC_OK;
}

cvc_status js_open_gz(gzFile gz, const void *pre, size_t npre, size_t max_value,
		      js_src **out, char *err, size_t errlen)
{
	cvc_status st;

	if ((st = js_new(max_value, out, err, errlen))) {
		gzclose(gz);
		return st;
	}
	(*out)->gz = gz;
	/* The chunk is megabytes, the head detection read is 64 KiB. */
	if (npre > JS_CHUNK)
		npre = JS_CHUNK;
	memcpy((*out)->buf, pre, npre);
	(*out)->len = npre;
	(*out)->buf[npre] = '\0';
	return CVC_OK;
}

void js_close(js_src *s)
{
	if (!s)
		return;
	if (s->gz)
		gzclose(s->gz);
	free(s->buf);
	free(s);
}

cvc_status js_status(const js_src *s)
{
	return s->st;
}

const char *js_errmsg(const js_src *s)
{
	return s->err;
}

cvc_status js_fail(js_src *s, cvc_status st, int64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->st)  /* the first failure is the one worth reporting */
		return s->st;
	n = snprintf(s->err, sizeof s->err, "byte %lld: ", (long long)off);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof s->err)
		vsnprintf(s->err + n, sizeof s->err - (size_t)n, fmt, ap);
	va_end(ap);
	s->st = st;
	return st;
}

int64_t js_offset(const js_src *s)
{
	return s->base + (int64_t)s->pos;
}

int64_t js_raw_offset(const js_src *s)
{
	return (int64_t)gzoffset(s->gz);
}

int64_t js_raw_size(const js_src *s)
{
	return s->raw_size;
}

/*
 * Reads more input after buf[len], dropping bytes before mark.  Returns the
 * number of bytes added, 0 at the end of the stream, -1 on failure.
 */
static long js_fill(js_src *s)
{
	int got;
	size_t room;

	if (s->st)
		return -1;
	if (s->eof)
		return 0;
	if (s->mark > 0) {
		memmove(s->buf, s->buf + s->mark, s->len - s->mark);
		s->len -= s->mark;
		s->pos -= s->mark;
		s->base += (int64_t)s->mark;
		s->mark = 0;
	}
	if (s->len == s->cap) {
		size_t ncap = s->cap * 2;
		char *nb;

		if (s->cap >= s->max_cap) {
			js_fail(s, CVC_ERR_FORMAT, s->base,
				"one value spans more than %zu MiB, expected smaller events",
				s->max_cap >> 20);
			return -1;
		}
		if (ncap > s->max_cap)
			ncap = s->max_cap;
		nb = realloc(s->buf, ncap + JS_PAD);
		if (!nb) {
			js_fail(s, CVC_ERR_NOMEM, s->base, "out of memory");
			return -1;
		}
		s->buf = nb;
		s->cap = ncap;
	}
	room = s->cap - s->len;
	if (room > (size_t)1 << 30)
		room = (size_t)1 << 30;
	got = gzread(s->gz, s->buf + s->len, (unsigned)room);
	if (got <= 0) {
		char msg[256];
		/* zlib reports a cut gzip stream as a plain end of file, with
		 * Z_BUF_ERROR behind it */
		cvc_status zst = cvc_gz_status(s->gz, msg, sizeof msg);

		if (got == 0 && zst == CVC_OK) {
			s->eof = 1;
			return 0;
		}
		js_fail(s, zst ? zst : CVC_ERR_IO, s->base + (int64_t)s->len, "%s", msg);
		return -1;
	}
	s->len += (size_t)got;
	{
		char msg[256];
		cvc_status zst = cvc_gz_inflate_check(s->gz, (int64_t)gztell(s->gz), msg, sizeof msg);

		if (zst) {
			js_fail(s, zst, s->base + (int64_t)s->len, "%s", msg);
			return -1;
		}
	}
	/* The sentinel, and defined bytes for the 16-byte loads that pass it. */
	memset(s->buf + s->len, 0, 16);
	return got;
}

int js_peek(js_src *s)
{
	for (;;) {
		while (s->pos < s->len && is_ws((unsigned char)s->buf[s->pos]))
			s->pos++;
		if (s->pos < s->len)
			return (unsigned char)s->buf[s->pos];
		s->mark = s->pos;
		long r = js_fill(s);

		if (r < 0)
			return -2;
		if (r == 0)
			return -1;
	}
}

void js_advance(js_src *s)
{
	if (s->pos < s->len)
		s->pos++;
}

/* Refills keeping the current value; *i is kept pointing at the same byte. */
static int refill_at(js_src *s, size_t *i)
{
	size_t rel = *i - s->mark;
	long r = js_fill(s);

	*i = s->mark + rel;
	return (int)r;
}

static cvc_status eof_fail(js_src *s, size_t i, const char *what)
{
	if (s->st)
		return s->st;
	return js_fail(s, CVC_ERR_FORMAT, s->base + (int64_t)i,
		       "unexpected end of file, expected %s", what);
}

/*
 * Scans the string whose opening quote is at *i; leaves *i after its end.
 * Escapes are stepped over, not checked: jc_* checks the strings it reads.
 * memchr (wide vector loads in libc) is fastest here; a quote is escaped
 * when an odd run of backslashes precedes it, and that run cannot pass the
 * opening quote, which stays in the buffer.
 */
static cvc_status span_string(js_src *s, size_t *i)
{
	size_t j = *i + 1;

	for (;;) {
		const char *q = memchr(s->buf + j, '"', s->len - j);

		if (!q) {
			size_t rel = s->len - *i;
			int r = refill_at(s, i);

			if (r < 0)
				return s->st;
			if (r == 0)
				return eof_fail(s, s->len, "'\"' to end the string");
			j = *i + rel;
			continue;
		}
		size_t at = (size_t)(q - s->buf), b = at;

		while (s->buf[b - 1] == '\\')
			b--;
		if (((at - b) & 1) == 0) {
			*i = at + 1;
			return CVC_OK;
		}
		j = at + 1;
	}
}

cvc_status js_span(js_src *s, int depth, const char **p, size_t *n, int64_t *off)
{
	size_t i, start;
	int c = js_peek(s);
	uint64_t stack = 0;  /* bit per open level: 1 object, 0 array */
	int d = 0;

	if (c == -2)
		return s->st;
	if (c == -1)
		return eof_fail(s, s->pos, "a value");
	start = s->mark = s->pos;
	i = start;
	if (c == '"') {
		if (span_string(s, &i))
			return s->st;
		goto done;
	}
	if (c != '{' && c != '[') {
		/* Scalar: the strict parser checks it; here just find its end. */
		for (;;) {
			while (i < s->len && (isalnum((unsigned char)s->buf[i]) ||
					      s->buf[i] == '-' || s->buf[i] == '+' ||
					      s->buf[i] == '.'))
				i++;
			if (i < s->len)
				break;
			int r = refill_at(s, &i);

			if (r < 0)
				return s->st;
			if (r == 0)
				break;
		}
		if (i == s->mark)
			return js_fail(s, CVC_ERR_FORMAT, s->base + (int64_t)i,
				       "expected a value");
		goto done;
	}
	for (;;) {
		const unsigned char *q = skip_plain((const unsigned char *)s->buf + i);

		i = (size_t)((const char *)q - s->buf);
		switch (cls[*q]) {
		case C_NUL:
			if (i < s->len)
				return js_fail(s, CVC_ERR_FORMAT, s->base + (int64_t)i,
					       "NUL byte, expected JSON text");
			{
				int r = refill_at(s, &i);

				if (r < 0)
					return s->st;
				if (r == 0)
					return eof_fail(s, i, stack & 1 ? "'}'" : "']'");
			}
			break;
		case C_OPEN:
			if (depth + d >= JS_MAX_DEPTH || d >= 63)
				return js_fail(s, CVC_ERR_FORMAT, s->base + (int64_t)i,
					       "nesting deeper than %d levels", JS_MAX_DEPTH);
			stack = stack << 1 | (*q == '{');
			d++;
			i++;
			break;
		case C_CLOSE:
			if ((*q == '}') != (int)(stack & 1))
				return js_fail(s, CVC_ERR_FORMAT, s->base + (int64_t)i,
					       "expected %s", stack & 1 ? "'}'" : "']'");
			stack >>= 1;
			i++;
			if (--d == 0)
				goto done;
			break;
		case C_QUOTE:
			if (span_string(s, &i))
				return s->st;
			break;
		}
	}
done:
	*p = s->buf + s->mark;
	*n = i - s->mark;
	*off = s->base + (int64_t)s->mark;
	s->pos = i;
	return CVC_OK;
}

/* ---- strict in-memory parsing -------------------------------------------- */

void jc_init(jcur *c, const char *p, size_t n, int64_t off)
{
	c->p = c->base = p;
	c->end = p + n;
	c->base_off = off;
	c->err_off = -1;
	c->what[0] = '\0';
}

int jc_fail(jcur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err_off >= 0)
		return -1;
	c->err_off = c->base_off + (c->p - c->base);
	va_start(ap, fmt);
	vsnprintf(c->what, sizeof c->what, fmt, ap);
	va_end(ap);
	return -1;
}

int jc_ws(jcur *c)
{
	while (c->p < c->end && is_ws((unsigned char)*c->p))
		c->p++;
	return c->p < c->end ? (unsigned char)*c->p : -1;
}

int jc_expect(jcur *c, char ch)
{
	if (jc_ws(c) != (unsigned char)ch)
		return jc_fail(c, "expected '%c'", ch);
	c->p++;
	return 0;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Bytes a string body cannot hold as they are. */
static const unsigned char str_special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1,
	[0x06] = 1, [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1,
	[0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1,
	[0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1,
	[0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

/* At the opening quote. */
static int jc_string(jcur *c, jval *v)
{
	const char *q = c->p + 1;

	v->type = J_STR;
	v->esc = 0;
	v->off = c->base_off + (c->p - c->base);
	for (;;) {
		while (q < c->end && !str_special[(unsigned char)*q])
			q++;
		if (q >= c->end) {
			c->p = q;
			return jc_fail(c, "expected '\"' to end the string");
		}
		unsigned char ch = (unsigned char)*q;

		if (ch == '"')
			break;
		if (ch < 0x20) {
			c->p = q;
			return jc_fail(c, "control character in string, expected an escape");
		}
		if (ch == '\\') {
			v->esc = 1;
			if (q + 1 >= c->end) {
				c->p = q;
				return jc_fail(c, "expected an escape sequence");
			}
			switch (q[1]) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n':
			case 'r': case 't':
				q += 2;
				continue;
			case 'u':
				for (int k = 2; k < 6; k++)
					if (q + k >= c->end || hexval((unsigned char)q[k]) < 0) {
						c->p = q;
						return jc_fail(c, "bad \\u escape, expected 4 hex digits");
					}
				/* a NUL cut a name short where it was stored (issue 36) */
				if (!memcmp(q + 2, "0000", 4)) {
					c->p = q;
					return jc_fail(c, "\\u0000 in a string, expected text without "
						       "NUL characters");
				}
				q += 6;
				continue;
			default:
				c->p = q;
				return jc_fail(c, "bad escape '\\%c', expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u",
					       q[1] >= 0x20 && q[1] < 0x7f ? q[1] : '?');
			}
		}
		q++;
	}
	v->p = c->p + 1;
	v->n = (size_t)(q - v->p);
	c->p = q + 1;
	return 0;
}

static int is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

/* Steps *q over one or more digits; a failure (what) at *q when none. */
static int skip_digits(jcur *c, const char **q, const char *what)
{
	if (*q >= c->end || !is_digit((unsigned char)**q)) {
		c->p = *q;
		return jc_fail(c, "%s", what);
	}
	while (*q < c->end && is_digit((unsigned char)**q))
		(*q)++;
	return 0;
}

static int jc_number(jcur *c, jval *v)
{
	const char *q = c->p;

	v->type = J_NUM;
	v->flt = 0;
	v->off = c->base_off + (c->p - c->base);
	if (q < c->end && *q == '-')
		q++;
	if (q < c->end && *q == '0')
		q++;
	else if (skip_digits(c, &q, "expected a digit"))
		return -1;
	if (q < c->end && *q == '.') {
		v->flt = 1;
		q++;
		if (skip_digits(c, &q, "expected a digit after '.'"))
			return -1;
	}
	if (q < c->end && (*q == 'e' || *q == 'E')) {
		v->flt = 1;
		q++;
		if (q < c->end && (*q == '+' || *q == '-'))
			q++;
		if (skip_digits(c, &q, "expected a digit in the exponent"))
			return -1;
	}
	v->p = c->p;
	v->n = (size_t)(q - c->p);
	c->p = q;
	return 0;
}

static int jc_word(jcur *c, jval *v, const char *w, enum jtype t)
{
	size_t n = strlen(w);

	v->off = c->base_off + (c->p - c->base);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
		return jc_fail(c, "expected a value");
	v->type = t;
	v->p = c->p;
	v->n = n;
	c->p += n;
	return 0;
}

int jc_member(jcur *c, int *first, jval *key)
{
	int ch = jc_ws(c);

	if (ch == '}') {
		c->p++;
		return 0;
	}
	if (*first) {
		*first = 0;
	} else {
		if (ch != ',')
			return jc_fail(c, "expected ',' or '}'");
		c->p++;
		ch = jc_ws(c);
	}
	if (ch != '"')
		return jc_fail(c, "expected a string key");
	if (jc_string(c, key) || jc_expect(c, ':'))
		return -1;
	return 1;
}

int jc_element(jcur *c, int *first)
{
	int ch = jc_ws(c);

	if (ch == ']') {
		c->p++;
		return 0;
	}
	if (*first) {
		*first = 0;
		return 1;
	}
	if (ch != ',')
		return jc_fail(c, "expected ',' or ']'");
	c->p++;
	return 1;
}

int jc_value(jcur *c, jval *v, int depth, int open_containers)
{
	int ch = jc_ws(c), first = 1, r;
	jval sub;

	v->off = c->base_off + (c->p - c->base);
	v->p = c->p;
	v->n = 0;
	switch (ch) {
	case '"': return jc_string(c, v);
	case 't': return jc_word(c, v, "true", J_TRUE);
	case 'f': return jc_word(c, v, "false", J_FALSE);
	case 'n': return jc_word(c, v, "null", J_NULL);
	case '{':
	case '[':
		if (depth >= JS_MAX_DEPTH)
			return jc_fail(c, "nesting deeper than %d levels", JS_MAX_DEPTH);
		v->type = ch == '{' ? J_OBJ : J_ARR;
		c->p++;
		if (open_containers)
			return 0;
		if (ch == '{') {
			while ((r = jc_member(c, &first, &sub)) == 1)
				if (jc_value(c, &sub, depth + 1, 0))
					return -1;
		} else {
			while ((r = jc_element(c, &first)) == 1)
				if (jc_value(c, &sub, depth + 1, 0))
					return -1;
		}
		if (r < 0)
			return -1;
		v->n = (size_t)(c->p - v->p);
		return 0;
	case -1:
		return jc_fail(c, "unexpected end of text, expected a value");
	default:
		if (ch == '-' || is_digit(ch))
			return jc_number(c, v);
		return jc_fail(c, "expected a value");
	}
}

int jv_eq_esc(const jval *v, const char *lit, size_t n)
{
	char tmp[256];
	long m;

	if (n >= sizeof tmp)
		return 0;
	m = jv_decode(v, tmp, sizeof tmp);
	return m >= 0 && (size_t)m == n && memcmp(tmp, lit, n) == 0;
}

static size_t put_utf8(char *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static uint32_t hex4(const char *p)
{
	uint32_t u = 0;

	for (int k = 0; k < 4; k++)
		u = u << 4 | (uint32_t)hexval((unsigned char)p[k]);
	return u;
}

long jv_decode(const jval *v, char *dst, size_t cap)
{
	const char *p = v->p, *e = v->p + v->n;
	size_t o = 0;

	if (!v->esc) {
		if (v->n > cap)
			return -1;
		memcpy(dst, v->p, v->n);
		return (long)v->n;
	}
	while (p < e) {
		char tmp[4];
		size_t k;

		if (*p != '\\') {
			if (o >= cap)
				return -1;
			dst[o++] = *p++;
			continue;
		}
		switch (p[1]) {
		case 'b': tmp[0] = '\b'; k = 1; break;
		case 'f': tmp[0] = '\f'; k = 1; break;
		case 'n': tmp[0] = '\n'; k = 1; break;
		case 'r': tmp[0] = '\r'; k = 1; break;
		case 't': tmp[0] = '\t'; k = 1; break;
		case 'u': {
			uint32_t u = hex4(p + 2);

			p += 6;
			if (u >= 0xd800 && u <= 0xdbff && e - p >= 6 && p[0] == '\\' &&
			    p[1] == 'u') {
				uint32_t lo = hex4(p + 2);

				if (lo >= 0xdc00 && lo <= 0xdfff) {
					u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
					p += 6;
				} else {
					u = 0xfffd;
				}
			} else if (u >= 0xd800 && u <= 0xdfff) {
				u = 0xfffd;  /* unpaired surrogate */
			}
			k = put_utf8(tmp, u);
			if (o + k > cap)
				return -1;
			memcpy(dst + o, tmp, k);
			o += k;
			continue;
		}
		default: tmp[0] = p[1]; k = 1; break;  /* \" \\ \/ */
		}
		if (o + k > cap)
			return -1;
		memcpy(dst + o, tmp, k);
		o += k;
		p += 2;
	}
	return (long)o;
}

/* Exponent forms: rare; strtod on a bounded copy. */
static int num_via_double(const jval *v, double scale, double *out)
{
	char tmp[128];
	char *endp;
	double x;

	if (v->n >= sizeof tmp)
		return -1;
	memcpy(tmp, v->p, v->n);
	tmp[v->n] = '\0';
	errno = 0;
	x = strtod(tmp, &endp);
	if (endp != tmp + v->n || errno == ERANGE || !isfinite(x))
		return -1;
	x *= scale;
	if (!(x > -9.2e18 && x < 9.2e18))
		return -1;
	*out = x;
	return 0;
}

int jv_int(const jval *v, int64_t *out)
{
	const char *p = v->p, *e = v->p + v->n;
	int neg = 0;
	uint64_t acc = 0;

	if (v->type != J_NUM)
		return -1;
	if (v->flt) {
		double x;

		if (num_via_double(v, 1.0, &x) || x != floor(x))
			return -1;
		*out = (int64_t)x;
		return 0;
	}
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < e; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (acc > (UINT64_C(9223372036854775807) - d) / 10)
			return -1;
		acc = acc * 10 + d;
	}
	*out = neg ? -(int64_t)acc : (int64_t)acc;
	return 0;
}

int jv_us_to_ns(const jval *v, int64_t *ns)
{
	const char *p = v->p, *e = v->p + v->n;
	const uint64_t lim = (UINT64_C(9223372036854775807) / 1000) - 1;
	uint64_t ip = 0, frac = 0;
	int neg = 0, nf = 0, up = 0;

	if (v->type != J_NUM)
		return -1;
	if (memchr(v->p, 'e', v->n) || memchr(v->p, 'E', v->n)) {
		double x;

		if (num_via_double(v, 1000.0, &x))
			return -1;
		*ns = llround(x);
		return 0;
	}
	if (p < e && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < e && *p != '.'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (ip > (lim - d) / 10)
			return -1;
		ip = ip * 10 + d;
	}
	if (p < e)
		p++;  /* '.' */
	for (; p < e; p++, nf++) {
		if (nf < 3)
			frac = frac * 10 + (uint64_t)(*p - '0');
		else if (nf == 3)
			up = *p >= '5';
	}
	for (; nf < 3; nf++)
		frac *= 10;
	/* Half away from zero: the magnitude rounds up, then the sign. */
	uint64_t m = ip * 1000 + frac + (uint64_t)up;

	*ns = neg ? -(int64_t)m : (int64_t)m;
	return 0;
}
