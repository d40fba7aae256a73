/*
 * cvc_base.h - the helpers every room shares, at the bottom beside the
 * database: growable memory and the number parser.
 *
 * Memory: every array cvc grows doubles through cvc_grow(), which checks the
 * size arithmetic once instead of at each of the call sites that used to
 * write their own `cap ? cap * 2 : N` loop; text built a byte at a time goes
 * into a cvc_buf, which carries the bound its input may not pass (in the
 * spirit of curl's dynbuf: a trace cell or a report cell can make a buffer
 * grow only up to its cap, never without bound).
 *
 * Numbers: one strict parser for integers and one for reals, so that every
 * reader of a file or flag refuses the same things ("12abc", "", "nan",
 * "1e999") the same way.
 */
#ifndef CVC_BASE_H
#define CVC_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "cvc.h"

/* ---- arrays ------------------------------------------------------------ */

/*
 * Makes the array whose pointer is at arrp (any T **, cast to void *) hold
 * at least need elements of elem bytes: *cap doubles from first (at least
 * need) and the array is reallocated.  Nothing happens when *cap >= need.
 * CVC_ERR_NOMEM when the size does not fit a size_t or realloc fails; the
 * array and *cap are then as they were, still owned by the caller.
 */
CVC_API cvc_status cvc_grow(void *arrp, size_t *cap, size_t need, size_t elem, size_t first);

/*
 * cvc_grow() for arrays an input fills, which must stay bounded: doubles
 * from 64 but never holds more than max elements.  CVC_ERR_NOMEM when need
 * passes max (the caller names the bound in its message) or memory runs
 * out; the array and *cap are then as they were.
 */
CVC_API cvc_status cvc_grow_bounded(void *arrp, size_t *cap, size_t need, size_t elem,
				    size_t max);

/* ---- bounded text ------------------------------------------------------ */

/* A NUL-terminated byte buffer that never holds more than max bytes. */
typedef struct cvc_buf {
	char *p;     /* NULL until the first byte; then always NUL-terminated */
	size_t len;  /* bytes held, not counting the NUL */
	size_t cap;  /* bytes allocated */
	size_t max;  /* the most len may reach */
} cvc_buf;

#define CVC_BUF_INIT(max_) {NULL, 0, 0, (max_)}

/*
 * Appends n bytes.  CVC_ERR_FORMAT when len would pass max (the input is
 * larger than its bound: the caller says where), CVC_ERR_NOMEM when memory
 * runs out; either way the buffer is as it was.
 */
CVC_API cvc_status cvc_buf_add(cvc_buf *b, const void *bytes, size_t n);
CVC_API cvc_status cvc_buf_addc(cvc_buf *b, char c);

/* Empties the buffer (len 0, "" once it has memory); keeps its memory. */
CVC_API void cvc_buf_reset(cvc_buf *b);

/* Text held, "" when nothing was ever added; valid until the next add. */
CVC_API const char *cvc_buf_str(const cvc_buf *b);

/* Frees the memory; the buffer is empty and reusable with the same max. */
CVC_API void cvc_buf_free(cvc_buf *b);

/* ---- strings ---------------------------------------------------------- */

/* 1 when s ends with suffix (".gz", ".sqlite", ...), else 0. */
CVC_API int cvc_str_ends(const char *s, const char *suffix);

/*
 * Bytes of the UTF-8 character at s (1-4), or 0 when s does not start a
 * valid one (overlong, surrogate, past U+10FFFF, cut).  s[0] != 0.
 */
CVC_API int cvc_utf8_len(const unsigned char *s);

/*
 * Text from a file, made safe to show (issue 36 item 13: U+202E in a model
 * name reversed the report's headline, "10%" read "%01"; escape and CR
 * characters in kernel names reached the terminal raw): C0 controls and
 * DEL become \xNN, C1 controls (U+0080..U+009F), the bidirectional
 * controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and
 * the line and paragraph separators (U+2028, U+2029) become \uXXXX, a
 * byte that is no UTF-8 becomes U+FFFD; other text is kept.  With
 * keep_lines, tab, newline and carriage return are kept (a table's cell:
 * text that is shown again later, escaped for a terminal then).
 * cvc_text_safe_dup returns a malloc'd copy (NULL on no memory);
 * cvc_text_safe writes into out (cap > 0, cut on a character boundary)
 * and returns out.
 */
CVC_API char *cvc_text_safe_dup(const char *s, int keep_lines);
CVC_API const char *cvc_text_safe(const char *s, int keep_lines, char *out, size_t cap);

/* 1 when word is one of the '|'-separated words of list ("a|bb|c"), else 0. */
CVC_API int cvc_str_in_list(const char *list, const char *word);

/* ---- hashing ---------------------------------------------------------- */

/*
 * FNV-1a over len bytes: the string caches (the store's interned names, the
 * profiler's decoder) hash short kernel names, where it needs no setup and
 * is fast enough.  Inline: the decoder calls it per record.
 */
static inline uint64_t cvc_hash_fnv1a(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* ---- messages --------------------------------------------------------- */

/*
 * Formats a message into err (nothing when err is NULL or errlen 0) and
 * returns st: the one line every reader that fills a caller's error buffer
 * ends a failure with.
 */
CVC_API cvc_status cvc_errf(char *err, size_t errlen, cvc_status st, const char *fmt, ...)
	CVC_PRINTF(4, 5);

/* ---- numbers ----------------------------------------------------------- */

/*
 * All of s as a base-10 integer in [lo, hi]; blanks around it are allowed.
 * CVC_ERR_FORMAT for anything else (empty, trailing text, out of range);
 * *out is written only on success.
 */
CVC_API cvc_status cvc_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);

/*
 * All of s as a finite real number (strtod's forms, so "1e3" and "0x10";
 * not "nan" or "inf"); blanks around it are allowed.  CVC_ERR_FORMAT
 * otherwise; *out is written only on success.
 */
CVC_API cvc_status cvc_parse_f64(const char *s, double *out);

/*
 * v with sig significant digits (1..17) in positional notation, never an
 * exponent (4515923.7 at 6 digits is "4515924", not "4.51592e+06";
 * 1.25e-5 is "0.0000125"), trailing zeros dropped; "" for NaN and the
 * infinities.  Every CSV and JSON number cvc writes for people goes
 * through it.  buf holds at least 32 bytes; returns buf.
 */
CVC_API const char *cvc_fmt_plain(double v, int sig, char *buf, size_t len);

/* v rounded to a whole number as printf's "%.0f" writes it (halves to
 * even, "-0" kept), without printf where the digits are certain: the
 * percentages of warnings written for every scenario.  Returns buf. */
CVC_API const char *cvc_fmt_whole(double v, char *buf, size_t len);

/*
 * v for a person to read: 3 significant figures with thousands separators
 * (4515923.7 -> "4,520,000"; 0.0119036 -> "0.0119"; 0.99956 -> "1.00";
 * 1234 -> "1,234" as an integer), never an exponent; "" for NaN and the
 * infinities.  Returns buf.
 */
CVC_API const char *cvc_fmt_readable(double v, char *buf, size_t len);

/* ---- shares of a step ------------------------------------------------- */

/*
 * The shares every cvc output prints, one definition each, so that
 * analyze, project and report cannot mean different things by one name
 * (issue 35: the report printed comm / (compute + comm) beside
 * exposed / step under one label).  step is the wall time the parts are
 * shares of: a projected step (step_s) or a traced span (span_us), in any
 * one unit with the parts.
 *   comm_share      = comm / step: communication, hidden or not, as a part
 *                     of the step (the seed papers' "fraction of runtime")
 *   exposed_share   = exposed / step: the communication no compute hides
 *   comm_to_compute = comm / compute: above 1 no overlap can hide it all
 * A share whose denominator is not positive is NaN (an empty cell).
 * Pure; out must not be NULL.
 */
typedef struct cvc_shares {
	double comm_share, exposed_share, comm_to_compute;
} cvc_shares;

CVC_API void cvc_shares_of(double step, double compute, double comm, double exposed,
			   cvc_shares *out);

#endif /* CVC_BASE_H */
