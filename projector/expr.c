/*
 * expr.c - the `where:` filter language: arithmetic, comparisons and
 * boolean logic over scenario fields, compiled once into a postfix program
 * so that filtering a 10^6-scenario sweep costs a few ns per row.
 *
 *   expr := or;  or := and (("||"|"or") and)*;  and := not (("&&"|"and") not)*
 *   not  := ("!"|"not") not | cmp;  cmp := sum (("=="|"!="|"<"|"<="|">"|">=") sum)?
 *   sum  := prod (("+"|"-") prod)*;  prod := unary (("*"|"/"|"%") unary)*
 *   unary := "-" unary | primary
 *   primary := NUMBER | FIELD | "true" | "false" | "(" expr ")"
 *            | ("min"|"max") "(" expr "," expr ")"
 *            | FIELD ("=="|"!=") "STRING"      (string and enum fields)
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proj_internal.h"

enum op {
	OP_CONST, OP_FIELD, OP_METRIC, OP_STREQ, OP_NEG, OP_NOT, OP_ADD, OP_SUB, OP_MUL, OP_DIV,
	OP_MOD, OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR, OP_MIN, OP_MAX
};

struct insn {
	enum op op;
	int field;
	int negate;       /* OP_STREQ: != */
	double v;
	char str[48];     /* OP_STREQ on PF_STR fields */
};

#define EXPR_MAX_INSN 256
#define EXPR_MAX_DEPTH 48

struct proj_expr {
	int n;
	int uses_result; /* reads an output column */
	struct insn code[];
};

struct parser {
	const char *s, *p;
	struct insn code[EXPR_MAX_INSN];
	int n, depth;
	char *err;
	size_t errlen;
	int failed;
};

static void perr(struct parser *ps, const char *what)
{
	if (ps->failed)
		return;
	ps->failed = 1;
	snprintf(ps->err, ps->errlen, "column %d: %s", (int)(ps->p - ps->s) + 1, what);
}

static void emit(struct parser *ps, enum op op, int field, double v)
{
	if (ps->n >= EXPR_MAX_INSN) {
		perr(ps, "expression too long");
		return;
	}
	memset(&ps->code[ps->n], 0, sizeof ps->code[0]);
	ps->code[ps->n].op = op;
	ps->code[ps->n].field = field;
	ps->code[ps->n].v = v;
	ps->n++;
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

/* Consumes tok (an operator or a keyword) when it comes next. */
static int accept(struct parser *ps, const char *tok)
{
	size_t n = strlen(tok);

	skip_ws(ps);
	if (strncmp(ps->p, tok, n) != 0)
		return 0;
	/* keywords must end at a word boundary; "<" must not eat "<=" */
	if (isalpha((unsigned char)tok[0]) &&
	    (isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_'))
		return 0;
	if ((strcmp(tok, "<") == 0 || strcmp(tok, ">") == 0 || strcmp(tok, "!") == 0) &&
	    ps->p[n] == '=')
		return 0;
	ps->p += n;
	return 1;
}

static void parse_or(struct parser *ps);

static int read_ident(struct parser *ps, char *buf, size_t len)
{
	size_t i = 0;

	skip_ws(ps);
	if (!isalpha((unsigned char)*ps->p) && *ps->p != '_')
		return 0;
	while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '-') {
		/* '-' only inside a word such as kv-heads, never a trailing minus */
		if (*ps->p == '-' && !isalpha((unsigned char)ps->p[1]))
			break;
		if (i + 1 < len)
			buf[i++] = *ps->p == '-' ? '_' : *ps->p;
		ps->p++;
	}
	buf[i] = 0;
	return 1;
}

static void parse_primary(struct parser *ps)
{
	char id[48];

	skip_ws(ps);
	if (++ps->depth > EXPR_MAX_DEPTH) {
		perr(ps, "expression nested too deeply");
		return;
	}
	if (accept(ps, "(")) {
		parse_or(ps);
		if (!accept(ps, ")"))
			perr(ps, "expected ')'");
	} else if (isdigit((unsigned char)*ps->p) || *ps->p == '.') {
		char *end = NULL;
		double v;

		errno = 0;
		v = strtod(ps->p, &end);
		if (errno || end == ps->p || !isfinite(v)) {
			perr(ps, "expected a number");
		} else {
			ps->p = end;
			emit(ps, OP_CONST, 0, v);
		}
	} else if (read_ident(ps, id, sizeof id)) {
		int f;

		if (strcmp(id, "true") == 0) {
			emit(ps, OP_CONST, 0, 1);
		} else if (strcmp(id, "false") == 0) {
			emit(ps, OP_CONST, 0, 0);
		} else if (strcmp(id, "min") == 0 || strcmp(id, "max") == 0) {
			int is_min = id[1] == 'i';

			if (!accept(ps, "("))
				perr(ps, "expected '(' after min/max");
			parse_or(ps);
			if (!accept(ps, ","))
				perr(ps, "expected ','");
			parse_or(ps);
			if (!accept(ps, ")"))
				perr(ps, "expected ')'");
			emit(ps, is_min ? OP_MIN : OP_MAX, 0, 0);
		} else if ((f = proj_field_find(NULL, id)) < 0 &&
			   (f = proj_metric_find(id)) >= 0) {
			/* an output column: fits, mem_gb, mfu, comm_share, ... */
			emit(ps, OP_METRIC, f, 0);
		} else if (f < 0) {
			perr(ps, "unknown field or output column name");
		} else if (proj_fields[f].type == PF_STR || proj_fields[f].type == PF_ENUM) {
			/* only `field == "word"` / `!=` make sense for words */
			int neg;
			const char *q;
			size_t n;

			if (accept(ps, "=="))
				neg = 0;
			else if (accept(ps, "!="))
				neg = 1;
			else {
				if (proj_fields[f].type == PF_ENUM) {
					emit(ps, OP_FIELD, f, 0);
					ps->depth--;
					return;
				}
				perr(ps, "expected '==' or '!=' after a text field");
				return;
			}
			skip_ws(ps);
			if (*ps->p != '"' && *ps->p != '\'') {
				perr(ps, "expected a quoted string");
				return;
			}
			q = strchr(ps->p + 1, *ps->p);
			if (!q) {
				perr(ps, "unterminated string");
				return;
			}
			n = (size_t)(q - ps->p - 1);
			if (n >= sizeof ps->code[0].str) {
				perr(ps, "string too long");
				return;
			}
			if (proj_fields[f].type == PF_ENUM) {
				char w[48];
				int idx;

				memcpy(w, ps->p + 1, n);
				w[n] = 0;
				idx = proj_enum_index(proj_fields[f].names, w);
				if (idx < 0) {
					perr(ps, "not one of the field's values");
					return;
				}
				emit(ps, OP_FIELD, f, 0);
				emit(ps, OP_CONST, 0, idx);
				emit(ps, neg ? OP_NE : OP_EQ, 0, 0);
			} else {
				emit(ps, OP_STREQ, f, 0);
				if (!ps->failed) {
					memcpy(ps->code[ps->n - 1].str, ps->p + 1, n);
					ps->code[ps->n - 1].str[n] = 0;
					ps->code[ps->n - 1].negate = neg;
				}
			}
			ps->p = q + 1;
		} else {
			emit(ps, OP_FIELD, f, 0);
		}
	} else {
		perr(ps, *ps->p ? "expected a number, field or '('" : "unexpected end of expression");
	}
	ps->depth--;
}

/* Operators of one precedence level, tried in order ("<=" before "<"). */
struct opword {
	const char *tok;
	enum op op;
};

#define NOPS(a) (sizeof a / sizeof a[0])

static const struct opword neg_ops[] = {{"-", OP_NEG}};
static const struct opword prod_ops[] = {{"*", OP_MUL}, {"/", OP_DIV}, {"%", OP_MOD}};
static const struct opword sum_ops[] = {{"+", OP_ADD}, {"-", OP_SUB}};
static const struct opword cmp_ops[] = {
	{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE},
	{"<", OP_LT}, {">", OP_GT},
};
static const struct opword not_ops[] = {{"!", OP_NOT}, {"not", OP_NOT}};
static const struct opword and_ops[] = {{"&&", OP_AND}, {"and", OP_AND}};
static const struct opword or_ops[] = {{"||", OP_OR}, {"or", OP_OR}};

/* Consumes the first of ops that comes next: 1 and its *op, or 0. */
static int accept_op(struct parser *ps, const struct opword *ops, size_t n, enum op *op)
{
	for (size_t i = 0; i < n; i++) {
		if (accept(ps, ops[i].tok)) {
			*op = ops[i].op;
			return 1;
		}
	}
	return 0;
}

/*
 * The grammar's precedence levels, loosest first: each parses the next
 * tighter level as its operands, the last one primaries.  A prefix level
 * applies its operator to its own level again (- - x, not not x), its
 * nesting counted against EXPR_MAX_DEPTH; comparisons do not chain
 * (a < b < c is an error).
 */
enum assoc { PREFIX, LEFT, NONASSOC };

static const struct level {
	const struct opword *ops;
	size_t n;
	enum assoc assoc;
} levels[] = {
	{or_ops, NOPS(or_ops), LEFT},
	{and_ops, NOPS(and_ops), LEFT},
	{not_ops, NOPS(not_ops), PREFIX},
	{cmp_ops, NOPS(cmp_ops), NONASSOC},
	{sum_ops, NOPS(sum_ops), LEFT},
	{prod_ops, NOPS(prod_ops), LEFT},
	{neg_ops, NOPS(neg_ops), PREFIX},
};

static void parse_level(struct parser *ps, size_t lv)
{
	const struct level *l;
	enum op op;

	if (lv == NOPS(levels)) {
		parse_primary(ps);
		return;
	}
	l = &levels[lv];
	if (l->assoc == PREFIX) {
		if (!accept_op(ps, l->ops, l->n, &op)) {
			parse_level(ps, lv + 1);
			return;
		}
		if (++ps->depth > EXPR_MAX_DEPTH) {
			perr(ps, "expression nested too deeply");
			return;
		}
		parse_level(ps, lv);
		ps->depth--;
		emit(ps, op, 0, 0);
		return;
	}
	parse_level(ps, lv + 1);
	while (!ps->failed && accept_op(ps, l->ops, l->n, &op)) {
		parse_level(ps, lv + 1);
		emit(ps, op, 0, 0);
		if (l->assoc == NONASSOC)
			break;
	}
}

static void parse_or(struct parser *ps)
{
	parse_level(ps, 0);
}

proj_expr *proj_expr_compile(const char *text, char *err, size_t errlen)
{
	struct parser *ps = calloc(1, sizeof *ps);
	proj_expr *e = NULL;

	if (!ps) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ps->s = ps->p = text;
	ps->err = err;
	ps->errlen = errlen;
	parse_or(ps);
	skip_ws(ps);
	if (!ps->failed && *ps->p)
		perr(ps, "expected an operator or end of expression");
	if (ps->failed)
		goto out;
	e = malloc(sizeof *e + (size_t)ps->n * sizeof e->code[0]);
	if (!e) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	e->n = ps->n;
	memcpy(e->code, ps->code, (size_t)ps->n * sizeof e->code[0]);
	e->uses_result = 0;
	for (int i = 0; i < e->n; i++)
		e->uses_result |= e->code[i].op == OP_METRIC;
out:
	free(ps);
	return e;
}

void proj_expr_free(proj_expr *e)
{
	free(e);
}

int proj_expr_uses_result(const proj_expr *e)
{
	return e->uses_result;
}

double proj_expr_eval(const proj_expr *e, const cvc_proj_scenario *sc, const cvc_proj_result *r)
{
	/* depth of the stack never exceeds the instruction count */
	double st[EXPR_MAX_INSN];
	int sp = 0;

	for (int i = 0; i < e->n; i++) {
		const struct insn *in = &e->code[i];
		double a, b;

		switch (in->op) {
		case OP_CONST:
			st[sp++] = in->v;
			continue;
		case OP_FIELD:
			st[sp++] = proj_field_get(sc, in->field);
			continue;
		case OP_METRIC:
			st[sp++] = r ? proj_metric_get(r, in->field) : NAN;
			continue;
		case OP_STREQ: {
			const char *v = *(const char *const *)((const char *)sc +
							       proj_fields[in->field].offset);
			int eq = v && strcmp(v, in->str) == 0;

			st[sp++] = in->negate ? !eq : eq;
			continue;
		}
		case OP_NEG:
			st[sp - 1] = -st[sp - 1];
			continue;
		case OP_NOT:
			st[sp - 1] = !(st[sp - 1] != 0);
			continue;
		default:
			break;
		}
		b = st[--sp];
		a = st[sp - 1];
		switch (in->op) {
		case OP_ADD: a = a + b; break;
		case OP_SUB: a = a - b; break;
		case OP_MUL: a = a * b; break;
		case OP_DIV: a = b != 0 ? a / b : NAN; break;
		case OP_MOD: a = b != 0 ? fmod(a, b) : NAN; break;
		case OP_LT: a = a < b; break;
		case OP_LE: a = a <= b; break;
		case OP_GT: a = a > b; break;
		case OP_GE: a = a >= b; break;
		case OP_EQ: a = a == b; break;
		case OP_NE: a = a != b; break;
		case OP_AND: a = (a != 0 && !isnan(a)) && (b != 0 && !isnan(b)); break;
		case OP_OR: a = (a != 0 && !isnan(a)) || (b != 0 && !isnan(b)); break;
		case OP_MIN: a = a < b ? a : b; break;
		case OP_MAX: a = a > b ? a : b; break;
		default: a = NAN; break;
		}
		st[sp - 1] = a;
	}
	return sp == 1 ? st[0] : NAN;
}
