/* csv.c - see cvc_csv.h.  Lives in db/, the first module, so every later
 * module and the CLI can share one reader and one writer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cvc/cvc_base.h"
#include "cvc/cvc_csv.h"

/*
 * A cell a spreadsheet would run as a formula: text (not a number) that
 * starts with = + - @ or a tab / CR (OWASP "CSV injection").  Kernel
 * names, scenario and model names come from files cvc did not write.
 */
static int formula_like(const char *s)
{
	char *end;

	if (!s[0] || !strchr("=+-@\t\r", s[0]))
		return 0;
	errno = 0;
	(void)strtod(s, &end);
	return !(end != s && *end == '\0'); /* -1.5, +7.68: numbers stay numbers */
}

int cvc_csv_verbatim(const char *s, size_t n)
{
	return !formula_like(s) && !strpbrk(s, ",\"\r\n") &&
	       (n == 0 || (s[0] != ' ' && s[n - 1] != ' '));
}

void cvc_csv_field(FILE *f, const char *s)
{
	int neutral;

	if (!s)
		return;
	if (cvc_csv_verbatim(s, strlen(s))) {
		fputs(s, f);
		return;
	}
	neutral = formula_like(s);
	putc('"', f);
	if (neutral)
		putc('\'', f); /* shown as text, never evaluated */
	for (; *s; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}

void cvc_csv_rec_release(cvc_csv_rec *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->n; i++)
		free(rec->f[i]);
	free(rec->f);
	memset(rec, 0, sizeof *rec);
}

int cvc_csv_split(char *line, char **f, int maxf)
{
	int nf = 0;
	char *p = line;

	while (nf < maxf) {
		char *c;

		f[nf++] = p;
		if (*p == '"') {
			char *w = p; /* the unquoted text is written over the quoted */

			for (p++;; p++) {
				if (!*p)
					return -1; /* no closing quote on the line */
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p++;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p;
				}
			}
			if (*p && *p != ',')
				return -1; /* text after the closing quote */
			*w = '\0';
			c = *p ? p : NULL;
		} else {
			c = strchr(p, ',');
			if (memchr(p, '"', c ? (size_t)(c - p) : strlen(p)))
				return -1; /* a quote inside an unquoted field */
		}
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	return nf;
}

cvc_status cvc_csv_record(const char *name, const char *s, size_t len, size_t *pos, long *line,
			  cvc_csv_rec *rec, size_t max_fields, size_t max_cell, char *err,
			  size_t errlen)
{
	return cvc_csv_record_sep(name, s, len, pos, line, ',', rec, max_fields, max_cell, err,
				  errlen);
}

cvc_status cvc_csv_record_sep(const char *name, const char *s, size_t len, size_t *pos,
			      long *line, char sep, cvc_csv_rec *rec, size_t max_fields,
			      size_t max_cell, char *err, size_t errlen)
{
	size_t i = *pos;
	cvc_buf b = CVC_BUF_INIT(max_cell); /* the field being built */
	long start = *line, cur = *line; /* a quoted field may span lines */
	cvc_status st = CVC_ERR_FORMAT;
	cvc_status r;

	for (size_t k = 0; k < rec->n; k++)
		free(rec->f[k]);
	rec->n = 0;
	for (;;) {
		int quoted = 0;

		if (i < len && s[i] == '"') {
			quoted = 1;
			i++;
			for (;;) {
				if (i >= len) {
					snprintf(err, errlen, "'%s': line %ld: expected a closing '\"'",
						 name, start);
					goto out;
				}
				if (s[i] == '"') {
					if (i + 1 < len && s[i + 1] == '"') {
						i += 2;
						if ((r = cvc_buf_addc(&b, '"')))
							goto put_failed;
						continue;
					}
					i++;
					break;
				}
				if (s[i] == '\n')
					cur++;
				if ((r = cvc_buf_addc(&b, s[i++])))
					goto put_failed;
			}
		}
		while (i < len && s[i] != sep && s[i] != '\n' && s[i] != '\r') {
			if (quoted) {
				snprintf(err, errlen,
					 "'%s': line %ld: expected '%c' or a line end after a quoted field",
					 name, cur, sep);
				goto out;
			}
			if (s[i] == '"') {
				snprintf(err, errlen,
					 "'%s': line %ld: expected '\"' only inside a quoted field", name,
					 cur);
				goto out;
			}
			if ((r = cvc_buf_addc(&b, s[i++])))
				goto put_failed;
		}
		if (rec->n >= max_fields) {
			snprintf(err, errlen, "'%s': line %ld: expected at most %zu fields", name,
				 start, max_fields);
			goto out;
		}
		if (cvc_grow(&rec->f, &rec->cap, rec->n + 1, sizeof *rec->f, 32) != CVC_OK)
			goto nomem;
		rec->f[rec->n] = b.p ? b.p : strdup("");
		b.p = NULL; /* handed to the record */
		b.len = b.cap = 0;
		if (!rec->f[rec->n])
			goto nomem;
		rec->n++;
		if (i < len && s[i] == sep) {
			i++;
			continue;
		}
		break;
	}
	if (i < len && s[i] == '\r')
		i++;
	if (i < len && s[i] == '\n')
		i++;
	*line = cur + 1;
	*pos = i;
	st = CVC_OK;
	goto out;
put_failed:
	if (r == CVC_ERR_NOMEM)
		goto nomem;
	snprintf(err, errlen, "'%s': line %ld: expected fields under %zu bytes", name, start,
		 max_cell);
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
	st = CVC_ERR_NOMEM;
out:
	cvc_buf_free(&b);
	return st;
}

cvc_status cvc_file_read(const char *path, size_t max, char **out, size_t *len, char *err,
			 size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	cvc_status st = CVC_OK;
	int rerr = 0;

	*out = NULL;
	*len = 0;
	if (!f) {
		int e = errno;

		return cvc_errf(err, errlen, cvc_open_status(e), "'%s': cannot open: %s", path,
				strerror(e));
	}
	if (max > SIZE_MAX - 2)
		max = SIZE_MAX - 2;
	for (;;) {
		/* Reading one byte past max is what tells a file too large. */
		size_t want = max + 1 - n < 65536 ? max + 1 : n + 65536, got;

		if (cvc_grow(&buf, &cap, want + 1, 1, 131072) != CVC_OK) {
			st = cvc_errf(err, errlen, CVC_ERR_NOMEM, "out of memory");
			goto fail;
		}
		errno = 0;
		got = fread(buf + n, 1, want - n, f);
		rerr = errno;
		n += got;
		if (n > max) {
			st = cvc_errf(err, errlen, CVC_ERR_FORMAT,
				      "'%s': byte %zu: expected at most %zu bytes", path, max, max);
			goto fail;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		/* a directory opens but does not read (EISDIR): the caller's input,
		 * not the machine, is wrong */
		st = rerr ? cvc_errf(err, errlen, rerr == EIO ? CVC_ERR_IO : cvc_open_status(rerr),
				     "'%s': cannot read: %s", path, strerror(rerr))
			  : cvc_errf(err, errlen, CVC_ERR_IO, "'%s': read error", path);
		goto fail;
	}
	fclose(f);
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return CVC_OK;
fail:
	fclose(f);
	free(buf);
	return st;
}

const char *cvc_csv_dup_name(char *const *f, size_t n, size_t *a, size_t *b)
{
	for (size_t j = 1; j < n; j++)
		for (size_t i = 0; f[j][0] && i < j; i++)
			if (strcmp(f[i], f[j]) == 0) {
				if (a)
					*a = i;
				if (b)
					*b = j;
				return f[j];
			}
	return NULL;
}
