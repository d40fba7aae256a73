/*
 * json_scan.h - a streaming JSON scanner for large trace files.
 *
 * Two layers.  js_src reads a file (plain or gzip, through zlib's gzread)
 * into a refill buffer and finds the extent of one value at a time without
 * decoding it: the buffer keeps only the value being scanned, so memory is
 * O(largest single value).  jc_* parse one such value in memory, strictly,
 * decoding only what the caller asks for.
 *
 * The extent scan (js_span) checks that brackets balance and strings end;
 * it does not check everything inside (e.g. a bare word in a nested value):
 * that is what makes skipping uninteresting events fast.  Callers run jc_*
 * over the parts they use, which checks those parts fully.
 *
 * Nothing here is thread safe; one js_src per file and thread.
 */
#ifndef CVC_JSON_SCAN_H
#define CVC_JSON_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include "cvc/cvc.h"

/* Deepest nesting accepted anywhere in a document. */
#define JS_MAX_DEPTH 64

typedef struct js_src js_src;

/*
 * Opens path for scanning.  max_value caps the bytes one value may span
 * (bounded growth: a corrupt file cannot make the buffer grow without end).
 * On failure returns CVC_ERR_IO/CVC_ERR_NOMEM with a message in err.
 * Free with js_close (accepts NULL).
 */
cvc_status js_open(const char *path, size_t max_value, js_src **out, char *err,
		   size_t errlen);

/*
 * The same over an open zlib handle whose first npre bytes (decompressed)
 * were already read into pre: a pipe, whose head format detection took.
 * Takes gz (closed by js_close, also on failure); pre is copied.
 */
cvc_status js_open_gz(gzFile gz, const void *pre, size_t npre, size_t max_value,
		      js_src **out, char *err, size_t errlen);
void js_close(js_src *s);

/*
 * Status and message ("byte N: what", no path) of the last failure; the
 * message is "" while none happened.
 */
cvc_status js_status(const js_src *s);
const char *js_errmsg(const js_src *s);

/* Records a failure at stream offset off; returns st. */
cvc_status js_fail(js_src *s, cvc_status st, int64_t off, const char *fmt, ...)
	CVC_PRINTF(4, 5);

/* Offset in the decompressed stream of the next unread byte. */
int64_t js_offset(const js_src *s);

/* Compressed bytes consumed so far (for progress) and the file's size. */
int64_t js_raw_offset(const js_src *s);
int64_t js_raw_size(const js_src *s);

/*
 * Skips white space and returns the next byte without consuming it, -1 at
 * the end of the stream, -2 on a read error (js_status says which).
 */
int js_peek(js_src *s);

/* Consumes one byte (the one js_peek returned). */
void js_advance(js_src *s);

/*
 * Finds the value starting at the next non-blank byte and consumes it.
 * *p / *n receive its text, valid until the next call on s; *off its
 * stream offset.  depth is the nesting already open around the value.
 * Returns CVC_OK or CVC_ERR_FORMAT / CVC_ERR_IO / CVC_ERR_NOMEM.
 */
cvc_status js_span(js_src *s, int depth, const char **p, size_t *n, int64_t *off);

/* ---- in-memory strict parsing of one value ------------------------------ */

typedef struct jcur {
	const char *p, *end;   /* unread text */
	const char *base;      /* text that starts at stream offset base_off */
	int64_t base_off;
	int64_t err_off;       /* failure position, -1 while none */
	char what[160];        /* what was expected */
} jcur;

enum jtype { J_NONE = 0, J_STR, J_NUM, J_OBJ, J_ARR, J_TRUE, J_FALSE, J_NULL };

/* A value seen by jc_value: its type and raw text (strings without quotes). */
typedef struct jval {
	enum jtype type;
	const char *p;
	size_t n;
	int esc;        /* string: contains escapes */
	int flt;        /* number: has a fraction or exponent */
	int64_t off;    /* stream offset of the value's first byte */
} jval;

void jc_init(jcur *c, const char *p, size_t n, int64_t off);

/* Fails c at the current position with "expected <what>"; returns -1. */
int jc_fail(jcur *c, const char *fmt, ...) CVC_PRINTF(2, 3);

/* Skips white space; returns the next byte or -1 at the end of the text. */
int jc_ws(jcur *c);

/* Consumes ch (after white space) or fails "expected 'ch'"; 0 or -1. */
int jc_expect(jcur *c, char ch);

/*
 * Reads one value.  Scalars are checked fully and described in *v; objects
 * and arrays are skipped (checked fully, depth counted from depth) unless
 * open_containers is set, in which case only the opening byte is consumed.
 * Returns 0 or -1.
 */
int jc_value(jcur *c, jval *v, int depth, int open_containers);

/*
 * Object iteration: after '{' was consumed, jc_member() reads the next key
 * (`"key":`) into *key and returns 1, returns 0 at '}', -1 on error.
 * *first must start at 1.
 */
int jc_member(jcur *c, int *first, jval *key);

/* Array iteration: after '[', returns 1 when an element follows, 0 at ']'. */
int jc_element(jcur *c, int *first);

/* True when string value v equals lit[0..n); the escaped case decodes. */
int jv_eq_esc(const jval *v, const char *lit, size_t n);
static inline int jv_eqn(const jval *v, const char *lit, size_t n)
{
	if (v->type != J_STR)
		return 0;
	if (!v->esc)
		return v->n == n && memcmp(v->p, lit, n) == 0;
	return jv_eq_esc(v, lit, n);
}

/* jv_eq(v, "literal"): the length is taken at compile time. */
#define jv_eq(v, lit) jv_eqn((v), "" lit, sizeof(lit) - 1)

/*
 * Decodes string v (escapes, \u surrogate pairs into UTF-8; a lone
 * surrogate becomes U+FFFD) into dst[0..cap).  Returns the length, or -1
 * when it does not fit.  The escapes were already checked by jc_value.
 */
long jv_decode(const jval *v, char *dst, size_t cap);

/* Number v as an exact integer; -1 when not integral or out of range. */
int jv_int(const jval *v, int64_t *out);

/*
 * Number v in microseconds to integer nanoseconds, exactly from its
 * decimal digits (rounding half away from zero past three fraction digits);
 * exponent forms go through strtod.  -1 when out of range.
 */
int jv_us_to_ns(const jval *v, int64_t *ns);

#endif
