/*
 * tmpfiles.c - the files an interrupted command must not leave behind
 * (spilled copies of pipes, gunzipped exports, -j shards, output
 * temporaries, a database the command created while it holds the write
 * lock): cvc_tmp_remove_all() unlinks them and is safe to call from a
 * signal handler; cvc_tmp_on_signals() installs the tool's handlers.
 */
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cvc/cvc_out.h"

#define TMP_SLOTS 256
#define TMP_PATH 4200

static char tmp_path[TMP_SLOTS][TMP_PATH];
static volatile sig_atomic_t tmp_used[TMP_SLOTS];
static pthread_mutex_t tmp_mu = PTHREAD_MUTEX_INITIALIZER;

void cvc_tmp_add(const char *path)
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

void cvc_tmp_forget(const char *path)
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

void cvc_tmp_remove_all(void)
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

/* Removes what is registered, then dies of the signal as it would have. */
static void on_signal(int sig)
{
	cvc_tmp_remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void cvc_tmp_on_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, old;

		/* a signal the caller ignores (nohup, a shell's SIGPIPE) stays ignored */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++)
			sigaddset(&sa.sa_mask, sigs[k]);
		sigaction(sigs[i], &sa, NULL);
	}
}
