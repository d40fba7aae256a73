/*
 * scnmodel.c - the model a scenario file names: by the catalog of open
 * models (`model: NAME`, `{arch: NAME}`), by a Hugging Face config.json
 * (`{config: FILE}`), and the mapping that names a catalog model as a
 * label only, refused.  The rest of the file's grammar is scenario.c's.
 */
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "proj_internal.h"
#include "study.h"

/* A config.json path as the scenario file wrote it: relative to the file's
 * folder when the file has one. */
static void config_path(const cvc_proj_study *st, const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(st->file, '/');

	if (path[0] == '/' || !slash)
		snprintf(buf, len, "%s", path);
	else
		snprintf(buf, len, "%.*s/%s", (int)(slash - st->file), st->file, path);
}

/*
 * The model a scenario names, `model: NAME`, `{arch: NAME}` (the catalog,
 * projector/archs.yaml) or `{config: FILE}` (a Hugging Face config.json),
 * as one part per field it sets, appended to parts: applied before the
 * section's other keys, so those override it field by field.
 */
cvc_status proj_scn_arch_parts(cvc_proj_study *st, const yaml_node_t *n, int config,
			       const char *val, struct axis *parts, size_t *nparts)
{
	const struct proj_arch *e;
	struct proj_arch own;
	char err[512];
	cvc_status rc;

	if (!val)
		return proj_scn_fail(st, n, "expected a model name or a file name");
	if (config) {
		char path[1024];

		if (!st->configs && !(st->configs = proj_archs_new()))
			return proj_scn_nomem(st);
		config_path(st, val, path, sizeof path);
		if ((rc = proj_hf_config_load(path, st->configs, &own, err, sizeof err))) {
			if (rc == CVC_ERR_NOMEM)
				return proj_scn_nomem(st);
			proj_scn_fail(st, n, "%s", err);
			return rc;
		}
		e = &own;
	} else {
		if (!st->archs && (rc = proj_archs_load(&st->archs, err, sizeof err)))
			return rc == CVC_ERR_NOMEM ? proj_scn_nomem(st)
						   : proj_scn_fail(st, n, "%s", err);
		if (!(e = proj_archs_find(st->archs, val)))
			return proj_scn_fail(st, n, "unknown model '%.80s': expected a name from "
					     "cvc's catalog (`cvc project --models` lists them), "
					     "{config: FILE} (a Hugging Face config.json) or a "
					     "mapping of 'model' keys", val);
	}
	for (int i = -1; i < e->nkv; i++) {
		struct assign a;

		if (*nparts >= PROJ_MAX_FIELDS_PER_SECTION)
			return proj_scn_fail(st, n, "too many keys in section 'model'");
		a.field = i < 0 ? proj_field_find("model", "name") : e->kv[i].field;
		a.num = i < 0 ? 0 : e->kv[i].num;
		a.str = NULL;
		if (proj_fields[a.field].type == PF_STR &&
		    !(a.str = proj_scn_intern(st, i < 0 ? e->name : e->kv[i].str)))
			return proj_scn_nomem(st);
		memset(&parts[*nparts], 0, sizeof parts[*nparts]);
		if ((rc = proj_scn_alt_push(st, &parts[*nparts], &a, 1))) {
			proj_scn_axis_release(&parts[*nparts]);
			return rc;
		}
		(*nparts)++;
	}
	return CVC_OK;
}

/*
 * A model mapping holding a name of cvc's catalog and nothing else
 * (`{model: llama3.1-405b}`, `{name: ...}`) names that model's label only:
 * priced, it would be the default shape under the catalog model's name
 * (24 layers of 2048 called llama3.1-405b, 30 GB, fits).  Refused with the
 * way to say it.
 */
cvc_status proj_scn_name_alone(cvc_proj_study *st, yaml_document_t *doc, yaml_node_t *m)
{
	yaml_node_t *k = NULL, *v = NULL;
	const char *val;
	char err[512];
	cvc_status rc;

	if (m->data.mapping.pairs.top - m->data.mapping.pairs.start != 1)
		return CVC_OK;
	val = proj_scn_pair(doc, m->data.mapping.pairs.start, &k, &v);
	if (!val || proj_field_find("model", val) != proj_field_find("model", "name") ||
	    !(val = proj_scn_scalar(v)))
		return CVC_OK;
	if (!st->archs && (rc = proj_archs_load(&st->archs, err, sizeof err)))
		return rc == CVC_ERR_NOMEM ? proj_scn_nomem(st) : proj_scn_fail(st, v, "%s", err);
	if (!proj_archs_find(st->archs, val))
		return CVC_OK;
	return proj_scn_fail(st, v, "'%.80s' names a model of cvc's catalog, but this mapping "
			     "gives it as a label only (the shape would be the defaults): write "
			     "`arch: %.80s`, or the bare name", val, val);
}
