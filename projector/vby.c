/*
 * vby.c - the groups of `cvc validate --by`: a row's group key from the
 * cells of one or more columns, or from what was read of the row.  Issue
 * 34's bar is on "the MoE rows" per model family and GPU, and a table's
 * MoE cells are often blank where cvc's catalog knows the model (a hybrid
 * Mamba-MoE row names only its model), so `moe` groups by the model as
 * read, and `--by moe,model,gpu` prints the figures the bar is read from.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proj_internal.h"
#include "vby.h"

/* Copies part [s, s + len) trimmed of spaces into out (n bytes);
 * returns its length. */
static size_t trimmed(const char *s, size_t len, char *out, size_t n)
{
	while (len > 0 && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	snprintf(out, n, "%.*s", (int)len, s);
	return len;
}

static cvc_status part_of(struct vby *b, const char *name, const cvc_csv_rec *hdr,
			  const char *path, char *err, size_t errlen)
{
	int at = -1, f = proj_field_find(NULL, name);

	/* a file's own column of that name wins over the pseudo-columns */
	for (size_t c = 0; c < hdr->n && at < 0; c++)
		if (!strcmp(hdr->f[c], name))
			at = (int)c;
	if (at < 0 && !strcasecmp(name, "stack"))
		at = VBY_STACK;
	if (at < 0 && !strcasecmp(name, "moe"))
		at = VBY_MOE;
	if (at == -1) {
		snprintf(err, errlen, "'%s': no column '%s' to group by (nor 'stack', the software "
			 "stack and release each row's text names, or 'moe', MoE or dense as each "
			 "row's model reads)", path, name);
		return CVC_ERR_USAGE;
	}
	b->col[b->n] = at;
	/* the gpu column groups by the catalog's name of each row's GPU */
	b->hw[b->n] = at >= 0 && f >= 0 && f == proj_field_find("hardware", "gpu");
	b->n++;
	return CVC_OK;
}

cvc_status vby_parse(struct vby *b, const char *spec, const cvc_csv_rec *hdr, const char *path,
		     char *err, size_t errlen)
{
	memset(b, 0, sizeof *b);
	if (!spec)
		return CVC_OK;
	for (const char *s = spec;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		char name[128];
		cvc_status rc;

		if (trimmed(s, len, name, sizeof name) == 0) {
			snprintf(err, errlen, "--by '%s': expected a column name between the commas",
				 spec);
			return CVC_ERR_USAGE;
		}
		if (b->n == VBY_MAX) {
			snprintf(err, errlen, "--by '%s': expected at most %d columns", spec, VBY_MAX);
			return CVC_ERR_USAGE;
		}
		if ((rc = part_of(b, name, hdr, path, err, errlen)))
			return rc;
		if (!comma)
			return CVC_OK;
		s = comma + 1;
	}
}

/*
 * --by stack: the software stack and the month of the release the row's
 * text names (vstack.c), "Megatron-Bridge 2026-06 (release 26.06)".  What
 * a release turned on moves a row 1.6-2.2x on the same layout (issue 34),
 * and a file rarely has a column saying which it was.
 */
static void stack_key(const struct vstack *st, char *key, size_t n)
{
	const char *name = st->name ? st->name : "no stack named";

	if (st->year > 0 && st->month > 0)
		snprintf(key, n, "%s %04d-%02d (%s)", name, st->year, st->month, st->date_from);
	else if (st->year > 0)
		snprintf(key, n, "%s %04d (%s)", name, st->year, st->date_from);
	else
		snprintf(key, n, "%s, undated", name);
}

/* --by moe: a row whose model has experts, as read with the catalog's
 * fields (Nemotron-3-Nano's 128), is MoE; a row that could not be read
 * says so rather than counting as dense. */
static const char *moe_key(const struct vrow *row)
{
	if (row->why[0] && row->kind == CVC_PROJ_VWHY_ROW)
		return "(row not read)";
	return row->sc.experts > 1 ? "MoE" : "dense";
}

const char *vby_key(const struct vby *b, const struct vrow *row, const cvc_csv_rec *rec,
		    char *key, size_t n)
{
	size_t at = 0;

	key[0] = '\0';
	for (int i = 0; i < b->n && at + 1 < n; i++) {
		char st[160], part[160];
		const char *v;
		size_t len;
		int w;

		if (b->col[i] == VBY_STACK) {
			stack_key(&row->stack, st, sizeof st);
			v = st;
		} else if (b->col[i] == VBY_MOE) {
			v = moe_key(row);
		} else {
			v = b->hw[i] && row->g.gpu ? row->gpu : rec->f[b->col[i]];
		}
		/* spaces and a guess's '?' say nothing of the value */
		len = strlen(v);
		while (len > 0 && (v[len - 1] == '?' || v[len - 1] == ' ' || v[len - 1] == '\t'))
			len--;
		/* an empty cell is a value of its own, said so in a key */
		if (trimmed(v, len, part, sizeof part) == 0)
			snprintf(part, sizeof part, "(empty)");
		w = snprintf(key + at, n - at, "%s%s", i ? " / " : "", part);
		if (w < 0 || (size_t)w >= n - at)
			break; /* cut at n - 1 bytes */
		at += (size_t)w;
	}
	return key;
}
