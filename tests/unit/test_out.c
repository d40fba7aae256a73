/*
 * test_out.c - the output module (db/out.c, cvc_out.h): files are replaced,
 * never rewritten in place; what is not a regular file, an input or
 * another open output is refused; nothing is left behind on abort.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cvc/cvc_out.h"
#include "testutil.h"

static const char *fresh_dir(char buf[4096])
{
	snprintf(buf, 4096, "%s", tu_tmpdir());
	return buf;
}

/* Entries of dir, "." and ".." aside. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void expect_refused(const char *path, cvc_status want, const char *words)
{
	char err[1024] = "";
	cvc_out *o = NULL;
	cvc_status st = cvc_out_open(path, &o, err, sizeof err);

	cr_expect_eq(st, want, "%s: status %d (%s)", path, st, err);
	cr_expect_null(o);
	cr_expect(strstr(err, words) && strstr(err, path), "%s: %s", path, err);
}

Test(out, replaces_a_file_only_when_committed)
{
	char dirbuf[4096], err[1024];
	const char *dir = fresh_dir(dirbuf);
	char path[4200];
	cvc_out *o = NULL;
	struct stat sb;
	char *got;

	snprintf(path, sizeof path, "%s", tu_path(dir, "r.csv"));
	cr_assert_eq(tu_write(path, "old\n", 4), 0);
	cr_assert_eq(chmod(path, 0640), 0);
	cr_assert_eq(cvc_out_open(path, &o, err, sizeof err), CVC_OK, "%s", err);
	fputs("new\n", cvc_out_file(o));
	/* written aside: the target still holds the old bytes */
	got = tu_read(path, NULL);
	cr_expect_str_eq(got, "old\n");
	free(got);
	cr_expect_eq(entries(dir), 2, "the temporary file sits beside the target");
	cr_assert_eq(cvc_out_commit(o, err, sizeof err), CVC_OK, "%s", err);
	got = tu_read(path, NULL);
	cr_expect_str_eq(got, "new\n");
	free(got);
	cr_assert_eq(stat(path, &sb), 0);
	cr_expect_eq(sb.st_mode & 0777, 0640, "mode %o: the replaced file's mode is kept",
		     sb.st_mode & 0777);
	cr_expect_eq(entries(dir), 1);
	/* abort: the target as it was, nothing beside it */
	cr_assert_eq(cvc_out_open(path, &o, err, sizeof err), CVC_OK, "%s", err);
	fputs("lost\n", cvc_out_file(o));
	cvc_out_abort(o);
	got = tu_read(path, NULL);
	cr_expect_str_eq(got, "new\n");
	free(got);
	cr_expect_eq(entries(dir), 1);
	/* a new file */
	cr_assert_eq(cvc_out_open(tu_path(dir, "n.csv"), &o, err, sizeof err), CVC_OK, "%s", err);
	cr_assert_eq(cvc_out_commit(o, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(access(tu_path(dir, "n.csv"), F_OK), 0);
}

Test(out, refuses_what_is_not_a_regular_file_or_is_an_input)
{
	char dirbuf[4096], err[1024];
	const char *dir = fresh_dir(dirbuf);
	char path[4200], lnk[4200], fifo[4200], in[4200], sub[4200];
	cvc_out *a = NULL;

	snprintf(path, sizeof path, "%s", tu_path(dir, "t.csv"));
	snprintf(lnk, sizeof lnk, "%s", tu_path(dir, "l.csv"));
	snprintf(fifo, sizeof fifo, "%s", tu_path(dir, "f.csv"));
	snprintf(in, sizeof in, "%s", tu_path(dir, "in.yaml"));
	snprintf(sub, sizeof sub, "%s", tu_path(dir, "sub"));
	cr_assert_eq(tu_write(path, "x", 1), 0);
	cr_assert_eq(symlink(path, lnk), 0);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_assert_eq(mkdir(sub, 0755), 0);
	cr_assert_eq(tu_write(in, "y", 1), 0);
	expect_refused(lnk, CVC_ERR_USAGE, "symbolic link");
	expect_refused(fifo, CVC_ERR_USAGE, "not a regular file");
	expect_refused(sub, CVC_ERR_USAGE, "not a regular file");
	expect_refused("/dev/null", CVC_ERR_USAGE, "not a regular file");
	expect_refused(tu_path(dir, "missing/x.csv"), CVC_ERR_NOTFOUND, "cannot write");
	expect_refused(tu_path(dir, ""), CVC_ERR_USAGE, "expected a file name");
	/* an input, under its own name or a hard link to it */
	cr_assert_eq(cvc_out_input(in), CVC_OK);
	cr_assert_eq(link(in, tu_path(dir, "hard.yaml")), 0);
	expect_refused(in, CVC_ERR_USAGE, "one of this command's inputs");
	expect_refused(tu_path(dir, "hard.yaml"), CVC_ERR_USAGE, "one of this command's inputs");
	cvc_out_inputs_clear();
	/* two outputs of one name, the second given as another spelling */
	cr_assert_eq(cvc_out_open(path, &a, err, sizeof err), CVC_OK, "%s", err);
	{
		char again[4300];

		snprintf(again, sizeof again, "%s/../%s/t.csv", dir, strrchr(dir, '/') + 1);
		expect_refused(again, CVC_ERR_USAGE, "another output of this command");
	}
	cvc_out_abort(a);
	cr_expect_eq(entries(dir), 6, "refusals left files");
}

Test(out, stdout_is_written_through)
{
	char err[1024];
	cvc_out *o = NULL;

	cr_assert_eq(cvc_out_open("-", &o, err, sizeof err), CVC_OK);
	cr_expect_eq(cvc_out_file(o), stdout);
	cr_expect_eq(cvc_out_commit(o, err, sizeof err), CVC_OK);
}

Test(out, folders_to_write_into)
{
	char dirbuf[4096], err[1024];
	const char *dir = fresh_dir(dirbuf);
	int created = -1;

	cr_expect_eq(cvc_out_dir(tu_path(dir, "new"), &created, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(created, 1);
	cr_expect_eq(cvc_out_dir(tu_path(dir, "new"), &created, err, sizeof err), CVC_OK);
	cr_expect_eq(created, 0);
	cr_assert_eq(tu_write(tu_path(dir, "file"), "x", 1), 0);
	cr_expect_eq(cvc_out_dir(tu_path(dir, "file"), &created, err, sizeof err), CVC_ERR_USAGE);
	cr_expect(strstr(err, "is not a folder"), "%s", err);
	cr_expect_eq(cvc_out_dir(tu_path(dir, "a/b"), &created, err, sizeof err), CVC_ERR_NOTFOUND);
}

Test(out, registered_files_are_removed_with_their_side_files)
{
	char dirbuf[4096];
	const char *dir = fresh_dir(dirbuf);
	static const char *const names[] = {"x.db", "x.db-wal", "x.db-shm", "x.db-journal", "keep"};

	for (size_t i = 0; i < 5; i++)
		cr_assert_eq(tu_write(tu_path(dir, names[i]), "x", 1), 0);
	cvc_tmp_add(tu_path(dir, "x.db"));
	cvc_tmp_add(tu_path(dir, "gone"));
	cvc_tmp_forget(tu_path(dir, "gone"));
	cvc_tmp_remove_all();
	cr_expect_eq(entries(dir), 1);
	cr_expect_eq(access(tu_path(dir, "keep"), F_OK), 0);
}
