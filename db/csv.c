/* csv.c - see cvc_csv.h.  Lives in db/, the first module, so every later
 * module and the CLI can share it. */
#include <string.h>

#include "cvc/cvc_csv.h"

void cvc_csv_field(FILE *f, const char *s)
{
	size_t n;

	if (!s)
		return;
	n = strlen(s);
	if (!strpbrk(s, ",\"\r\n") && (n == 0 || (s[0] != ' ' && s[n - 1] != ' '))) {
		fputs(s, f);
		return;
	}
	putc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', f);
		putc(*s, f);
	}
	putc('"', f);
}
