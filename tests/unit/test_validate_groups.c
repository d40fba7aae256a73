/*
 * test_validate_groups.c - `cvc validate --by`: the summary per value of a
 * column, and per software stack and release the rows' text names.
 */
#include <stdlib.h>

#include <criterion/criterion.h>

#include "cvc/cvc_project.h"
#include "testutil.h"

Test(validate_groups, by_groups_and_bad_convention)
{
	const char *text = "layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,site\n"
			   "24,2048,16,512,8,1,1,2048,1.0,a\n24,2048,16,512,8,1,1,2048,2.0,b\n"
			   "24,2048,16,512,8,1,1,2048,3.0,a\n24,2048,16,512,8,1,1,2048,3.0, A? \n"
			   "24,2048,16,512,8,1,1,2048,3.0,a (b)\n";
	cvc_proj_validate_opts by = {NULL, "site", 0}, bad = {"flopz", NULL, 0}, nocol = {NULL, "x", 0};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, &by, &v, CVC_OK);

	/* case, spaces and a guess's '?' say nothing of the value; other words do */
	cr_assert_eq(v.ngroups, 3);
	cr_expect_str_eq(v.groups[0].key, "a");
	cr_expect_eq(v.groups[0].st.rows, 3);
	cr_expect_str_eq(v.groups[2].key, "a (b)");
	cr_expect_eq(v.groups[1].st.expressible, 1);
	free(out);
	cvc_proj_validation_release(&v);
	out = tu_validate_text(text, &bad, &v, CVC_ERR_USAGE);
	free(out);
	out = tu_validate_text(text, &nocol, &v, CVC_ERR_USAGE);
	free(out);
}

/*
 * Claim: --by stack groups rows by the stack and the release month their
 * text names (sub-releases join their month; a stack without a date, and
 * a date without a stack, are groups of their own), and a file's own
 * 'stack' column wins over the one read.
 */
Test(validate_groups, by_stack_groups_by_the_release_a_row_names)
{
	const char *text =
		"layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,source,notes\n"
		"24,2048,16,512,8,1,1,2048,1.0,Megatron-Bridge performance summary,"
		"Release 25.09 NeMo container\n"
		"24,2048,16,512,8,1,1,2048,2.0,Megatron-Bridge performance summary,"
		"Release 26.06.01 NeMo container\n"
		"24,2048,16,512,8,1,1,2048,3.0,Megatron-Bridge performance summary,"
		"Release 26.06 NeMo container\n"
		"24,2048,16,512,8,1,1,2048,3.0,torchtitan benchmarks,\n"
		"24,2048,16,512,8,1,1,2048,3.0,a paper,arXiv 2104.04473\n";
	const char *own = "layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,notes,stack\n"
			  "24,2048,16,512,8,1,1,2048,1.0,Release 25.09 NeMo container,x\n";
	cvc_proj_validate_opts by = {NULL, "stack", 0}, nocol = {NULL, "release", 0};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, &by, &v, CVC_OK);

	cr_assert_eq(v.ngroups, 4, "%s", out);
	cr_expect_str_eq(v.groups[0].key, "Megatron-Bridge 2025-09 (release 25.09)");
	cr_expect_eq(v.groups[0].st.rows, 1);
	cr_expect_str_eq(v.groups[1].key, "Megatron-Bridge 2026-06 (release 26.06)");
	cr_expect_eq(v.groups[1].st.rows, 2);
	cr_expect_eq(v.groups[1].st.expressible, 2);
	cr_expect_str_eq(v.groups[2].key, "torchtitan, undated");
	cr_expect_str_eq(v.groups[3].key, "no stack named 2021-04 (arxiv 2104.04473)");
	free(out);
	cvc_proj_validation_release(&v);
	out = tu_validate_text(own, &by, &v, CVC_OK);
	cr_assert_eq(v.ngroups, 1, "%s", out);
	cr_expect_str_eq(v.groups[0].key, "x");
	free(out);
	cvc_proj_validation_release(&v);
	out = tu_validate_text(text, &nocol, &v, CVC_ERR_USAGE);
	free(out);
}

/* Validates text under --by by and checks the groups' keys, in order,
 * and the rows of the first. */
static void expect_keys(const char *text, const char *by, const char *const *want, size_t n,
			int first_rows)
{
	cvc_proj_validate_opts o = {NULL, by, 0};
	cvc_proj_validation v;
	char *out = tu_validate_text(text, &o, &v, CVC_OK);

	cr_assert_eq(v.ngroups, n, "--by '%s': %s", by, out);
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(v.groups[i].key, want[i], "--by '%s', group %zu", by, i);
	cr_expect_eq(v.groups[0].st.rows, first_rows, "--by '%s': %s", by, out);
	free(out);
	cvc_proj_validation_release(&v);
}

/*
 * Claim: --by moe groups a row by its model as read, the catalog's fields
 * included: Nemotron-3-Nano, whose row leaves the experts blank, is MoE
 * (issue 34's bar is on the MoE rows, and blackwell-moe-runs.csv's hybrid
 * rows name only their model); a row that could not be read says so
 * rather than counting as dense.  Parts join: --by moe,gpu keys by both,
 * the GPU by the catalog's name.
 */
Test(validate_groups, by_moe_reads_the_model_as_the_catalog_gives_it)
{
	const char *text = "model,layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,gpu,dtype,"
			   "moe_experts,moe_topk\n"
			   "Nemotron-3-Nano,,,,512,8,1,1,4096,1.0,H100 SXM5 80GB,bf16,,\n"
			   "Llama3-8B,,,,512,8,1,1,4096,1.0,H100,bf16,,\n"
			   "x,24,2048,16,512,8,1,1,2048,1.0,B200,bf16,8,2\n"
			   "\"y,24,2048,16,512,8,1,1,2048,1.0,B200,bf16,,\n";
	static const char *const moe[] = {"MoE", "dense", "(row not read)"};
	static const char *const two[] = {"MoE / H100-SXM", "dense / H100-SXM", "MoE / B200",
					  "(row not read) / (empty)"};

	expect_keys(text, "moe", moe, 3, 2);
	expect_keys(text, " moe , gpu", two, 4, 1);
}

/* Claim: a --by list is refused, naming what, when a part is empty, names
 * no column (nor 'stack' or 'moe') or there are more than four; a file's
 * own 'moe' column wins over the one read. */
Test(validate_groups, by_lists_are_checked_and_a_files_column_wins)
{
	const char *text = "layers,hidden,heads,global_batch,gpus,tp,pp,seq,iter_s,moe\n"
			   "24,2048,16,512,8,1,1,2048,1.0,yes\n";
	static const char *const bad[] = {"moe,,stack", "moe,nosuch", "moe,moe,moe,moe,moe", ","};
	static const char *const own[] = {"yes"};

	expect_keys(text, "moe", own, 1, 1);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cvc_proj_validate_opts o = {NULL, bad[i], 0};
		cvc_proj_validation v;

		free(tu_validate_text(text, &o, &v, CVC_ERR_USAGE));
	}
}
