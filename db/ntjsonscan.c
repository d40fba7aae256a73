/*
 * ntjsonscan.c - what the bytes of an nccl-tests -J file say before json-c
 * parses them: whether they are one (its top-level keys), and where a file
 * cut short still holds whole results.
 *
 * nccl-tests (src/util.cu) writes the file as it runs, so a run that dies
 * leaves it open: no closing brace, perhaps half a result.  json-c parses
 * no unfinished document, so the scan finds the last byte after which the
 * text is whole up to the results list, and the reader closes the list
 * and the object there.  The scan follows brackets and strings only; it is
 * exact on text json-c has accepted so far, and a guess (enough for
 * telling formats apart) on any other.
 */
#include <string.h>

#include "cvc/cvc_nccltab.h"
#include "db/nccltab_int.h"

struct scan_state {
	int depth;
	int in_str, esc, capturing, expect_key;
	char key[32], cur_key[32];
	size_t key_len;              /* sizeof key: longer, or escaped: none the scan knows */
	int nkeys;
	int results_depth;           /* depth inside the results list, 0 outside it */
};

/* A key of the top-level object, finished. */
static void top_key(struct scan_state *s, struct nt_json_scan *sc)
{
	if (s->key_len >= sizeof s->key)
		s->key_len = 0;
	s->key[s->key_len] = '\0';
	memcpy(s->cur_key, s->key, sizeof s->key);
	if (s->nkeys == 0 && strcmp(s->key, "version") == 0)
		sc->header = 1;
	else if (s->nkeys == 1 && sc->header == 1 && strcmp(s->key, "start_time") == 0)
		sc->header = 2;
	s->nkeys++;
	if (strcmp(s->key, "config") == 0)
		sc->has_config = 1;
	else if (strcmp(s->key, "results") == 0)
		sc->has_results = 1;
	else if (strcmp(s->key, "traceEvents") == 0)
		sc->has_trace_events = 1;
	else if (strcmp(s->key, "out_of_bounds") == 0 || strcmp(s->key, "average_bus_bandwidth") == 0)
		sc->has_footer = 1;
}

/* One byte inside a string. */
static void string_byte(struct scan_state *s, struct nt_json_scan *sc, char c)
{
	if (s->esc) {
		s->esc = 0;
		s->key_len = sizeof s->key;
		return;
	}
	if (c == '\\') {
		s->esc = 1;
		return;
	}
	if (c == '"') {
		s->in_str = 0;
		if (s->capturing)
			top_key(s, sc);
		s->capturing = 0;
		return;
	}
	if (s->capturing && s->key_len < sizeof s->key)
		s->key[s->key_len++] = c;
}

/* A closing bracket at offset i. */
static void close_bracket(struct scan_state *s, struct nt_json_scan *sc, char c, size_t i)
{
	if (s->depth == 0)
		return;
	s->depth--;
	if (s->results_depth && s->depth == s->results_depth && c == '}') {
		/* an item of the results list is whole */
		sc->cut = i + 1;
		sc->nresults++;
	} else if (s->results_depth && s->depth == s->results_depth - 1 && c == ']') {
		sc->results_closed = 1;
		sc->cut = i + 1;
		s->results_depth = 0;
	}
	if (s->depth == 0) {
		sc->closed = 1;
		sc->end = i + 1;
	}
}

void nt_json_scan(const char *text, size_t n, struct nt_json_scan *sc)
{
	struct scan_state s;
	size_t i = 0;

	memset(sc, 0, sizeof *sc);
	memset(&s, 0, sizeof s);
	while (i < n && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i == n || text[i] != '{')
		return;
	sc->object = 1;
	for (; i < n && !sc->closed; i++) {
		char c = text[i];

		if (s.in_str) {
			string_byte(&s, sc, c);
			continue;
		}
		switch (c) {
		case '"':
			s.in_str = 1;
			s.capturing = s.depth == 1 && s.expect_key;
			s.key_len = 0;
			s.expect_key = 0;
			break;
		case '{':
		case '[':
			/* the list that follows the top-level key "results" */
			if (s.depth == 1 && c == '[' && strcmp(s.cur_key, "results") == 0)
				s.results_depth = 2;
			s.depth++;
			s.expect_key = s.depth == 1;
			break;
		case '}':
		case ']':
			close_bracket(&s, sc, c, i);
			break;
		case ',':
			s.expect_key = s.depth == 1;
			break;
		default:
			break;
		}
	}
}

int cvc_nt_json_sniff(const void *buf, size_t n)
{
	struct nt_json_scan sc;

	if (!buf)
		return 0;
	nt_json_scan(buf, n, &sc);
	if (!sc.object || sc.has_trace_events)
		return 0;
	if (sc.has_config && sc.has_results)
		return 1;
	/* A long environment or device list (every process of an MPI run) can
	 * push "config" and "results" past the bytes a caller looked at: the
	 * keys util.cu writes first, in their order, then tell it. */
	return !sc.closed && sc.header == 2;
}
