/*
 * format.c - one way every command prints a table: --format table (for a
 * person: aligned, readable numbers), csv (RFC 4180, exact numbers) or
 * json (an array of objects); a command whose output goes to a pipe may
 * choose csv as its default, one at a terminal table.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cvc/cvc_report.h"

const char *cli_format_default(const char *given, const char *piped)
{
	if (given)
		return given;
	return isatty(STDOUT_FILENO) ? "table" : piped;
}

void cli_table_print(const cvc_rep_table *t, const char *format)
{
	if (strcmp(format, "csv") == 0)
		cvc_rep_table_write_csv(stdout, t);
	else if (strcmp(format, "json") == 0)
		cvc_rep_table_write_json(stdout, t);
	else
		cvc_rep_table_write_text(stdout, t);
}
