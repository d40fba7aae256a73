/*
 * names.c - what a person names on a command line and the library must
 * find as named, never guessed: a GPU or system of the hardware catalog,
 * and the classifier's rule files.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cvc/cvc_classify.h"
#include "cvc/cvc_model.h"

int cli_hw_find(const char *cmd, const cvc_hw_catalog *cat, const char *opt, const char *name,
		const char *kind, const cvc_hw_spec **out)
{
	const char *near[3];
	char list[400] = "";
	size_t k, n = 0;

	*out = cvc_hw_catalog_find(cat, name, kind);
	if (*out)
		return 0;
	k = cvc_hw_catalog_nearest(cat, name, kind, near, 3);
	for (size_t i = 0; i < k; i++) {
		int w = snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", near[i]);

		if (w < 0 || (size_t)w >= sizeof list - n)
			break;
		n += (size_t)w;
	}
	return cli_error("%s: %s '%s': no %s of that name or alias in the hardware catalog%s%s "
			 "(add one with --catalog FILE or CVC_CATALOG; docs/MODELS.md)",
			 cmd, opt, name, kind ? (strcmp(kind, "gpu") == 0 ? "GPU" : kind) : "GPU or system",
			 k ? "; nearest: " : "", list);
}

int cli_rules_load(const char *cmd, const char *over, const char *only, int shipped,
		   cvc_rules **out)
{
	char err[1024];
	cvc_status st = CVC_OK;

	*out = NULL;
	if (over && only)
		return cli_error("%s: --rules adds to the shipped rules and --rules-only replaces "
				 "them: give one", cmd);
	if (over)
		st = cvc_rules_load_over_default(over, out, err, sizeof err);
	else if (only)
		st = cvc_rules_load(only, out, err, sizeof err);
	else if (shipped)
		st = cvc_rules_default(out, err, sizeof err);
	return st ? cli_fail(st, "%s", err) : 0;
}
