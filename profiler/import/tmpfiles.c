/*
 * tmpfiles.c - the temporary files an import makes (spilled copies of
 * pipes, gunzipped exports, -j shards), so an interrupted import leaves
 * none behind: cvc_import_remove_temporaries() unlinks them and is safe to
 * call from a signal handler (the CLI calls it on SIGINT/SIGTERM/SIGHUP).
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cvc/cvc_import.h"
#include "import_int.h"

#define TMP_SLOTS 256
#define TMP_PATH 4200

static char tmp_path[TMP_SLOTS][TMP_PATH];
static volatile sig_atomic_t tmp_used[TMP_SLOTS];
static pthread_mutex_t tmp_mu = PTHREAD_MUTEX_INITIALIZER;

void imp_tmp_add(const char *path)
{
	size_t n = strlen(path);

	if (n >= TMP_PATH - 16)
		return; /* not tracked; removed on the normal path only */
	pthread_mutex_lock(&tmp_mu);
	for (int i = 0; i < TMP_SLOTS; i++)
		if (!tmp_used[i]) {
			memcpy(tmp_path[i], path, n + 1);
			tmp_used[i] = 1;
			break;
		}
	pthread_mutex_unlock(&tmp_mu);
}

void imp_tmp_forget(const char *path)
{
	pthread_mutex_lock(&tmp_mu);
	for (int i = 0; i < TMP_SLOTS; i++)
		if (tmp_used[i] && strcmp(tmp_path[i], path) == 0) {
			tmp_used[i] = 0;
			break;
		}
	pthread_mutex_unlock(&tmp_mu);
}

/* unlink(path + suffix) with no library call but unlink (signal safe). */
static void unlink_with(const char *path, const char *suffix)
{
	char buf[TMP_PATH];
	size_t n = 0;

	while (path[n] && n < TMP_PATH - 16) {
		buf[n] = path[n];
		n++;
	}
	for (size_t k = 0; suffix[k] && n < TMP_PATH - 1; k++)
		buf[n++] = suffix[k];
	buf[n] = '\0';
	unlink(buf);
}

void cvc_import_remove_temporaries(void)
{
	for (int i = 0; i < TMP_SLOTS; i++) {
		if (!tmp_used[i])
			continue;
		unlink_with(tmp_path[i], "");
		unlink_with(tmp_path[i], "-wal");
		unlink_with(tmp_path[i], "-shm");
		unlink_with(tmp_path[i], "-journal");
		tmp_used[i] = 0;
	}
}
