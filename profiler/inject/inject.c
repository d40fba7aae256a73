/*
 * inject.c - libcvc_inject.so: the CUPTI injection library behind
 * `cvc profile`.  The CUDA driver loads it through CUDA_INJECTION64_PATH
 * and calls InitializeInjection() during cuInit.
 *
 * Design, for a profiled program that must not notice us:
 * - CUPTI buffers come from a pool allocated once at start; when the pool
 *   is empty the request gets no buffer (CUPTI drops and counts those
 *   records) instead of the program waiting or us allocating on its path.
 * - The buffer-completed callback only queues the full buffer for the
 *   writer thread (a mutex and a signal, O(1)); the writer decodes it into
 *   the per-process spool (decode.c) and hands the buffer back to the pool.
 * - Lost records (CUPTI drops, pool exhausted, disk full, unknown kinds) are
 *   counted and stored as run_meta "lost_records"; nothing aborts.
 * - The spool becomes a cvc database after the program is done: by the
 *   `cvc profile` parent, or here at exit when there is none.
 * - Flush on exit() from any thread (atexit), and on SIGINT/SIGTERM through
 *   a finisher thread, then the previous handler runs.
 * - A process killed outright (SIGKILL from a launcher, the OOM killer, a
 *   watchdog) loses about the last flush period (CVC_PROFILE_FLUSH_MS,
 *   1 s): the writer asks CUPTI for partly filled buffers that often
 *   (cuptiActivityFlushAll; CUPTI's own flush period hands over full ones
 *   only) and writes its spool buffer out as soon as it has decoded all it
 *   was handed; the process record is on disk at once.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "cvc/cvc.h"
#include "cvc/cvc_profile.h"
#include "decode.h"
#include "graph.h"
#include "inject_int.h"

#define COLLQ 8192 /* NCCL launch records waiting for the writer */
#define GRAPHQ 4096 /* graph node records waiting for the writer */
#define GRAPH_NODES (1u << 16) /* NCCL-made graph nodes (and clones) remembered */

_Static_assert(CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED == CVCI_CBID_GRAPHNODE_CREATED &&
	       CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED == CVCI_CBID_GRAPHNODE_CLONED,
	       "graph.h's callback ids are CUPTI's");

struct collq_ent {
	struct cvc_spool_coll c;
	char func[32], dtype[32];
};

struct qent {
	uint8_t *buf;
	size_t valid;
};

struct graphq_ent {
	uint32_t type;
	struct cvc_spool_graph r;
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* pool: nbuf buffers of bufsz bytes, free ones stacked */
	uint8_t *arena;
	size_t bufsz;
	int nbuf;
	uint8_t **free_stack;
	int nfree;
	/* full buffers waiting for the writer: at most nbuf, so never full */
	struct qent *q;
	int qhead, qlen;
	int stop;
	pthread_t writer, finisher, control;
	int have_writer, have_finisher, have_control;
	/* the writer thread's own */
	cvc_spool *sp;
	struct cvci_decoder dec;
	char spool_path[4096];
	unsigned acts;     /* asked for (--activities) */
	unsigned acts_on;  /* enabled: acts plus what they need */
	double delay_s, duration_s;
	long flush_ms;
	int cupti_flush_ok;
	/* CUPTI's answers (issue 19 item 2): kept for run_meta and the
	 * warnings; an enable can fail on the control thread, hence atomics */
	CUpti_SubscriberHandle subscriber;
	int subscribe_result;       /* CUptiResult of cuptiSubscribe */
	const char *subscribe_why;  /* its name (CUPTI's string) when refused, said */
	atomic_int enable_failed;   /* kinds whose cuptiActivityEnable failed */
	atomic_int enable_result;   /* the first failure's CUptiResult */
	atomic_llong buffers_done;  /* buffers CUPTI handed back to us */
	uint64_t t0_cupti;
	/* counters, any thread */
	atomic_llong dropped;       /* CUPTI's own count of dropped records */
	atomic_llong pool_empty;    /* buffer requests we could not serve */
	atomic_llong late_buffers;  /* buffers completed after we finished */
	atomic_int finishing, finished;
	/* set in a forked child: the writer and finisher threads, CUPTI and
	 * the spool are the parent's; the child must not touch them */
	atomic_int inert;
	/* NCCL launch records from the profiler plugin (any thread) */
	struct collq_ent collq[COLLQ];
	int cq_head, cq_len;
	atomic_llong lost_colls;
	atomic_llong graph_calls;   /* NCCL calls captured into CUDA graphs */
	/* CUDA-graph nodes NCCL's launches made (resource callbacks, any
	 * thread; under mu) and their records waiting for the writer */
	struct cvci_graph graph;
	struct graphq_ent graphq[GRAPHQ];
	int gq_head, gq_len;
	atomic_llong lost_graph;
	int graph_cb_failed;        /* resource callbacks CUPTI refused */
	/* the largest communicator NCCL initialised (under mu) */
	int nccl_nranks, nccl_rank;
	int env_rank;
	sem_t sig_sem;
	struct sigaction old_int, old_term;
} G = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void logmsg(const char *fmt, const char *a, const char *b)
{
	/* One line on stderr, only for things the user must act on. */
	fprintf(stderr, "cvc-inject: ");
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
}

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- pool and queue ------------------------------------------------------------ */

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;

	if (atomic_load(&G.inert)) {
		*buffer = NULL;
		*size = 0;
		*max_records = 0;
		return;
	}
	pthread_mutex_lock(&G.mu);
	if (G.nfree > 0)
		b = G.free_stack[--G.nfree];
	pthread_mutex_unlock(&G.mu);
	if (!b)
		atomic_fetch_add(&G.pool_empty, 1);
	*buffer = b;
	*size = b ? G.bufsz : 0;
	*max_records = 0;
}

static void give_back(uint8_t *b)
{
	pthread_mutex_lock(&G.mu);
	G.free_stack[G.nfree++] = b;
	pthread_mutex_unlock(&G.mu);
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				   size_t size, size_t valid)
{
	size_t dropped = 0;

	(void)size;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS &&
	    dropped)
		atomic_fetch_add(&G.dropped, (long long)dropped);
	if (!buffer || atomic_load(&G.inert))
		return;
	atomic_fetch_add(&G.buffers_done, 1);
	pthread_mutex_lock(&G.mu);
	if (valid == 0 || G.stop) {
		if (valid)
			atomic_fetch_add(&G.late_buffers, 1);
		G.free_stack[G.nfree++] = buffer;
	} else {
		G.q[(G.qhead + G.qlen) % G.nbuf] = (struct qent){buffer, valid};
		G.qlen++;
		pthread_cond_signal(&G.cv);
	}
	pthread_mutex_unlock(&G.mu);
}

void cvci_queue_coll(const struct cvc_spool_coll *c, const char *func, const char *dtype)
{
	struct collq_ent *e;

	if (atomic_load(&G.inert))
		return;
	pthread_mutex_lock(&G.mu);
	if (G.cq_len == COLLQ || G.stop) {
		pthread_mutex_unlock(&G.mu);
		atomic_fetch_add(&G.lost_colls, 1);
		return;
	}
	e = &G.collq[(G.cq_head + G.cq_len) % COLLQ];
	e->c = *c;
	snprintf(e->func, sizeof e->func, "%s", func ? func : "unknown");
	snprintf(e->dtype, sizeof e->dtype, "%s", dtype ? dtype : "unknown");
	G.cq_len++;
	if (G.cq_len >= COLLQ / 2)
		pthread_cond_signal(&G.cv);
	pthread_mutex_unlock(&G.mu);
}

void cvci_note_comm(int nranks, int rank)
{
	if (nranks <= 0 || rank < 0 || rank >= nranks)
		return;
	pthread_mutex_lock(&G.mu);
	if (nranks > G.nccl_nranks) {
		G.nccl_nranks = nranks;
		G.nccl_rank = rank;
	}
	pthread_mutex_unlock(&G.mu);
}

void cvci_note_graph_call(void)
{
	atomic_fetch_add(&G.graph_calls, 1);
}

/*
 * Takes up to max queued entries (esz bytes each) off the ring ring[cap]
 * at *head holding *len, into batch, under the mutex; the count taken.
 */
static int ring_take(void *ring, size_t esz, int cap, int *head, int *len, void *batch,
		     int max)
{
	int n = 0;

	pthread_mutex_lock(&G.mu);
	for (; n < max && *len > 0; n++) {
		memcpy((char *)batch + (size_t)n * esz, (char *)ring + (size_t)*head * esz, esz);
		*head = (*head + 1) % cap;
		(*len)--;
	}
	pthread_mutex_unlock(&G.mu);
	return n;
}

/* Writer thread (or finish() after it): the queued graph node records and
 * NCCL launches into the spool. */
static void drain_colls(void)
{
	struct graphq_ent gb[64];
	struct collq_ent cb[64];
	int n;

	while ((n = ring_take(G.graphq, sizeof *gb, GRAPHQ, &G.gq_head, &G.gq_len, gb, 64)))
		for (int i = 0; i < n; i++)
			cvc_spool_put(G.sp, gb[i].type, &gb[i].r, sizeof gb[i].r);
	while ((n = ring_take(G.collq, sizeof *cb, COLLQ, &G.cq_head, &G.cq_len, cb, 64)))
		for (int i = 0; i < n; i++) {
			cb[i].c.func_sid = cvci_intern(&G.dec, cb[i].func, strlen(cb[i].func));
			cb[i].c.dtype_sid = cvci_intern(&G.dec, cb[i].dtype, strlen(cb[i].dtype));
			cvc_spool_put(G.sp, CVC_SPOOL_COLL, &cb[i].c, sizeof cb[i].c);
		}
}

static void block_signals(void)
{
	sigset_t all;

	/* Signals meant for the program must land on its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

/* Deadline flush_ms from now on CLOCK_REALTIME (pthread_cond_timedwait's). */
static struct timespec deadline_after(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/*
 * CUPTI's own periodic flush hands over full buffers only ("Periodic flush
 * can return only those activity buffers which are full", cupti_activity.h),
 * so the records of a part-filled buffer waited for the next one to fill or
 * for exit: a process SIGKILLed on an H200 lost its last 1.7 s, twice at the
 * same record count (docs/GPU-VALIDATION.md).  So every flush period the
 * writer asks for part-filled buffers whose records are complete too (flag
 * 0: no CUDA sync), at the "regular interval in a separate thread" that the
 * header suggests.  The buffers come back through buf_completed, which takes
 * G.mu: the caller must not hold it.
 */
static void flush_when_due(int64_t *next_ns)
{
	struct timespec now;
	int64_t t;

	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	if (t < *next_ns)
		return;
	*next_ns = t + (int64_t)G.flush_ms * 1000000LL;
	if (!atomic_load(&G.finishing))
		cuptiActivityFlushAll(0);
}

static void *writer_main(void *arg)
{
	int64_t next_flush = 0;

	(void)arg;
	block_signals();
	for (;;) {
		struct qent e;
		struct timespec until = deadline_after(G.flush_ms);
		int idle = 0, caught_up;

		pthread_mutex_lock(&G.mu);
		while (G.qlen == 0 && !G.stop && G.cq_len < COLLQ / 2 && G.gq_len < GRAPHQ / 2 &&
		       !idle)
			idle = pthread_cond_timedwait(&G.cv, &G.mu, &until) == ETIMEDOUT;
		if (G.qlen == 0 && G.stop) {
			pthread_mutex_unlock(&G.mu);
			break;
		}
		if (G.qlen == 0) {
			pthread_mutex_unlock(&G.mu);
			flush_when_due(&next_flush);
			drain_colls();
			/* idle for a flush period: what is decoded goes to disk, so
			 * a SIGKILL loses no more than that period */
			if (idle)
				cvc_spool_flush(G.sp);
			continue;
		}
		e = G.q[G.qhead];
		G.qhead = (G.qhead + 1) % G.nbuf;
		G.qlen--;
		pthread_mutex_unlock(&G.mu);
		/* Launch records first: the kernels they describe come in later buffers. */
		drain_colls();
		cvci_decode(&G.dec, e.buf, e.valid);
		give_back(e.buf);
		/* Caught up with CUPTI: what it handed over goes to disk now (a
		 * write to the page cache, which a SIGKILL keeps).  Waiting for a
		 * flush period of idleness first lost 1.8 s of a process killed
		 * on an H200 (docs/GPU-VALIDATION.md): CUPTI's own period plus
		 * ours, or more when buffers kept coming. */
		pthread_mutex_lock(&G.mu);
		caught_up = G.qlen == 0;
		pthread_mutex_unlock(&G.mu);
		if (caught_up)
			cvc_spool_flush(G.sp);
		flush_when_due(&next_flush);
	}
	return NULL;
}

static void enable_kinds(int on);

/* ---- finishing ------------------------------------------------------------------ */

static void meta_n(const char *key, int64_t n)
{
	cvci_put_meta(&G.dec, key, n);
}

/*
 * The graph tracker is done (CUPTI unsubscribed: no more callbacks); what
 * its path could not do goes to run_meta, where a missing join is explained.
 */
static void finish_graph(void)
{
	int64_t failed, untracked;

	pthread_mutex_lock(&G.mu);
	failed = G.graph.id_failed;
	untracked = G.graph.untracked;
	cvci_graph_release(&G.graph);
	pthread_mutex_unlock(&G.mu);
	if (failed)
		meta_n("graph_node_id_failures", failed);
	if (untracked)
		meta_n("graph_nodes_untracked", untracked);
	if (G.graph_cb_failed)
		meta_n("graph_callback_failures", G.graph_cb_failed);
}

static void materialize_here(void)
{
	char db[4096], err[1024];
	size_t n = strlen(G.spool_path);

	if (n < 6 || n - 6 + 3 >= sizeof db)
		return;
	memcpy(db, G.spool_path, n - 6); /* ".spool" -> ".db" */
	memcpy(db + n - 6, ".db", 4);
	if (cvc_profile_materialize(G.spool_path, db, NULL, err, sizeof err) == CVC_OK)
		unlink(G.spool_path);
	else
		logmsg("%s%s", err, "; the spool is kept for 'cvc profile --materialize'");
}

static void finish(void)
{
	uint64_t ts = 0;
	int64_t lost;

	/* a forked child (a DataLoader worker) leaves the parent's spool alone:
	 * it has no writer thread to join and would write the parent's
	 * unflushed buffer into the shared file (issue 19 item 6) */
	if (atomic_load(&G.inert))
		return;
	if (atomic_exchange(&G.finishing, 1)) {
		/* Another thread is finishing: wait for it, bounded. */
		for (int i = 0; i < 1000 && !atomic_load(&G.finished); i++)
			usleep(10000);
		return;
	}
	/* No new records during teardown; the forced flush returns partial buffers too. */
	enable_kinds(0);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&G.mu);
	G.stop = 1;
	pthread_cond_signal(&G.cv);
	pthread_mutex_unlock(&G.mu);
	if (G.have_writer)
		pthread_join(G.writer, NULL);
	if (G.subscribe_result == CUPTI_SUCCESS)
		cuptiUnsubscribe(G.subscriber);
	drain_colls(); /* after the last callback */
	if (cuptiGetTimestamp(&ts) == CUPTI_SUCCESS) {
		meta_n("clock_end_cupti_ns", (int64_t)ts);
		meta_n("clock_end_realtime_ns", realtime_ns());
	}
	lost = atomic_load(&G.dropped) + G.dec.undecodable + atomic_load(&G.lost_colls) +
	       atomic_load(&G.lost_graph) + cvc_spool_lost(G.sp);
	meta_n("lost_records", lost);
	meta_n("pool_exhausted_requests", atomic_load(&G.pool_empty));
	meta_n("late_buffers", atomic_load(&G.late_buffers));
	meta_n("cupti_flush_period_ms", G.cupti_flush_ok ? G.flush_ms : 0);
	meta_n("cupti_subscribe_result", G.subscribe_result);
	if (G.subscribe_why)
		cvci_put_meta_str(&G.dec, "cupti_subscribe_error", G.subscribe_why);
	if (atomic_load(&G.graph_calls))
		meta_n("nccl_graph_captured_calls", atomic_load(&G.graph_calls));
	finish_graph();
	/* where the rank came from, for `cvc import` (issue 19 item 5):
	 * NCCL's world rank is preferred; a rank only from the environment
	 * (inherited by a compile or autotune child) yields on a collision */
	meta_n("rank.from_env", G.env_rank >= 0);
	pthread_mutex_lock(&G.mu);
	if (G.nccl_nranks > 0) {
		meta_n("rank.nccl", G.nccl_rank);
		meta_n("rank.nccl_nranks", G.nccl_nranks);
	}
	pthread_mutex_unlock(&G.mu);
	meta_n("activity_enable_failures", atomic_load(&G.enable_failed));
	meta_n("activity_enable_result", atomic_load(&G.enable_result));
	meta_n("cupti_buffers", atomic_load(&G.buffers_done));
	/* Subscribed and enabled, yet CUPTI never handed a buffer back: the
	 * driver had no device to run on, or a client that registered its own
	 * buffer callbacks after us (Kineto does) took the records. */
	if (G.subscribe_result == CUPTI_SUCCESS && !atomic_load(&G.enable_failed) &&
	    atomic_load(&G.buffers_done) == 0 && atomic_load(&G.pool_empty) == 0)
		cvci_say_no_buffers(&G.dec);
	meta_n("filtered_records", G.dec.filtered);
	meta_n("untimed_records", G.dec.untimed);
	meta_n("records", G.dec.records);
	cvc_spool_close(G.sp);
	G.sp = NULL;
	cvci_decoder_release(&G.dec);
	if (!getenv(CVC_ENV_PARENT))
		materialize_here();
	atomic_store(&G.finished, 1);
}

static void at_exit(void)
{
	finish();
}

static void *finisher_main(void *arg)
{
	(void)arg;
	block_signals();
	while (sem_wait(&G.sig_sem) != 0 && errno == EINTR)
		;
	finish();
	return NULL;
}

/*
 * SIGINT/SIGTERM: the work is done by the finisher thread (only sem_post and
 * nanosleep run here, both async-signal-safe; the wait is bounded at 10 s),
 * then the program's own handler runs, or the default action with the old
 * disposition restored.  A program that installs its own handler after us
 * replaces this one; its exit() still flushes through atexit.
 */
static void on_signal(int sig)
{
	struct sigaction *old = sig == SIGINT ? &G.old_int : &G.old_term;
	struct timespec ts = {0, 10000000};

	/* in a forked child there is no finisher to wait for */
	if (!atomic_load(&G.inert)) {
		sem_post(&G.sig_sem);
		for (int i = 0; i < 1000 && !atomic_load(&G.finished); i++)
			nanosleep(&ts, NULL);
	}
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction) {
			siginfo_t si;

			memset(&si, 0, sizeof si);
			si.si_signo = sig;
			old->sa_sigaction(sig, &si, NULL);
		}
	} else if (old->sa_handler == SIG_IGN) {
		return;
	} else if (old->sa_handler == SIG_DFL) {
		sigaction(sig, old, NULL);
		raise(sig);
	} else {
		old->sa_handler(sig);
	}
}

static void atfork_child(void)
{
	atomic_store(&G.inert, 1);
}

static void install_signals(void)
{
	struct sigaction sa;

	if (sem_init(&G.sig_sem, 0, 0) != 0)
		return;
	if (pthread_create(&G.finisher, NULL, finisher_main, NULL) != 0)
		return;
	G.have_finisher = 1;
	pthread_detach(G.finisher);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, &G.old_int);
	sigaction(SIGTERM, &sa, &G.old_term);
}

/* From here on the process's end finishes the spool: exit() or a signal. */
static int arm_finish(void)
{
	atexit(at_exit);
	install_signals();
	return 1;
}

/* ---- start -------------------------------------------------------------------------- */

static const struct { unsigned bit; CUpti_ActivityKind kind; } kinds[] = {
	{CVC_PROF_KERNEL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
	{CVC_PROF_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY},
	{CVC_PROF_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2},
	{CVC_PROF_MEMSET, CUPTI_ACTIVITY_KIND_MEMSET},
	{CVC_PROF_NVTX, CUPTI_ACTIVITY_KIND_MARKER},
	{CVC_PROF_EXTCORR, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION},
	{CVC_PROF_RUNTIME, CUPTI_ACTIVITY_KIND_RUNTIME},
	{CVC_PROF_DRIVER, CUPTI_ACTIVITY_KIND_DRIVER},
};

/*
 * Every enable is checked: a kind CUPTI refuses is counted (run_meta
 * activity_enable_failures, first result in activity_enable_result) and,
 * when CUPTI otherwise works here, said on stderr once.  Without a driver
 * every enable fails; cuptiSubscribe has said so already, so no more words.
 */
static void enable_kinds(int on)
{
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		CUptiResult r;

		if (!(G.acts_on & kinds[i].bit))
			continue;
		if (!on) {
			cuptiActivityDisable(kinds[i].kind);
			continue;
		}
		r = cuptiActivityEnable(kinds[i].kind);
		if (r == CUPTI_SUCCESS)
			continue;
		if (atomic_fetch_add(&G.enable_failed, 1) == 0) {
			const char *why = NULL;
			char kind[16];

			atomic_store(&G.enable_result, (int)r);
			if (G.subscribe_result != CUPTI_SUCCESS)
				continue;
			if (cuptiGetResultString(r, &why) != CUPTI_SUCCESS || !why)
				why = "unknown error";
			snprintf(kind, sizeof kind, "%d", (int)kinds[i].kind);
			logmsg("CUPTI refused activity kind %s (%s): those records are missing",
			       kind, why);
		}
	}
}

static void sleep_s(double s)
{
	struct timespec ts;

	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* --delay / --duration: switch recording on late and off early. */
static void *control_main(void *arg)
{
	(void)arg;
	block_signals();
	if (G.delay_s > 0)
		sleep_s(G.delay_s);
	if (!atomic_load(&G.finishing))
		enable_kinds(1);
	if (G.duration_s > 0) {
		sleep_s(G.duration_s);
		if (!atomic_load(&G.finishing)) {
			enable_kinds(0);
			cuptiActivityFlushAll(0);
		}
	}
	return NULL;
}

/*
 * The one CUPTI call of the graph path, kept thin: what gets spooled is
 * decided in graph.c, which the unit tests drive with synthetic ids.
 */
static int node_id(CUgraphNode n, uint64_t *id)
{
	*id = 0;
	return n && cuptiGetGraphNodeId(n, id) == CUPTI_SUCCESS;
}

/* A resource callback's record for the writer; never blocks the program
 * for long (one mutex), a full queue counts the record as lost. */
static void queue_graph(uint32_t cbid, int ok, uint64_t node, uint64_t orig, uint64_t launch)
{
	struct graphq_ent e;

	pthread_mutex_lock(&G.mu);
	if (cvci_graph_event(&G.graph, cbid, ok, node, orig, launch, &e.type, &e.r)) {
		if (G.gq_len == GRAPHQ) {
			atomic_fetch_add(&G.lost_graph, 1);
		} else {
			G.graphq[(G.gq_head + G.gq_len) % GRAPHQ] = e;
			if (++G.gq_len >= GRAPHQ / 2)
				pthread_cond_signal(&G.cv);
		}
	}
	pthread_mutex_unlock(&G.mu);
}

/*
 * The subscription claims CUPTI; its callbacks are the two graph-node
 * resource callbacks (issue 19 item 8).  GRAPHNODE_CREATED fires inside
 * the call that adds the node, stream capture included, so on the thread
 * of NCCL's launch while its launch id is pushed; GRAPHNODE_CLONED fires
 * when cudaGraphInstantiate (or cudaGraphClone) copies a node.
 */
static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_ResourceData *rd = data;
	const CUpti_GraphData *gd;
	uint64_t node = 0, orig = 0, launch = 0;
	int ok;

	(void)user;
	if (domain != CUPTI_CB_DOMAIN_RESOURCE || !rd || atomic_load(&G.inert))
		return;
	gd = rd->resourceDescriptor;
	if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED) {
		launch = cvci_nccl_current_launch();
		if (!launch)
			return; /* not NCCL's launch: the common case, one TLS read */
		ok = gd && node_id(gd->node, &node);
	} else if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) {
		ok = gd && node_id(gd->node, &node) && node_id(gd->originalNode, &orig);
	} else {
		return;
	}
	queue_graph((uint32_t)cbid, ok, node, orig, launch);
}

/* The graph-node callbacks on the subscriber; a refusal is counted. */
static void enable_graph_callbacks(void)
{
	static const CUpti_CallbackIdResource ids[] = {CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
						       CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED};

	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
		if (cuptiEnableCallback(1, G.subscriber, CUPTI_CB_DOMAIN_RESOURCE, ids[i]) !=
		    CUPTI_SUCCESS)
			G.graph_cb_failed++;
}

static const char *cbname(uint32_t domain, uint32_t cbid)
{
	const char *nm = NULL;

	if (cuptiGetCallbackName(domain == 1 ? CUPTI_CB_DOMAIN_DRIVER_API
					      : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &nm) != CUPTI_SUCCESS)
		return NULL;
	return nm;
}

/* The first of vars[0..n) set to an integer in min..2^30-1, else dflt. */
static int env_first_int(const char *const *vars, size_t n, long min, int dflt)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = getenv(vars[i]);
		char *end = NULL;
		long r;

		if (!v || !*v)
			continue;
		errno = 0;
		r = strtol(v, &end, 10);
		if (!errno && end != v && !*end && r >= min && r < (1L << 30))
			return (int)r;
	}
	return dflt;
}

static int env_rank(void)
{
	static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					   "SLURM_PROCID", "LOCAL_RANK"};

	return env_first_int(vars, sizeof vars / sizeof vars[0], 0, -1);
}

static int env_world(void)
{
	static const char *const vars[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					   "SLURM_NTASKS"};

	return env_first_int(vars, sizeof vars / sizeof vars[0], 1, 0);
}

static double env_double(const char *name)
{
	const char *v = getenv(name);
	char *end = NULL;
	double x;

	if (!v || !*v)
		return 0;
	x = strtod(v, &end);
	return (end != v && !*end && x > 0 && x < 1e9) ? x : 0;
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
	const char *v = getenv(name);
	char *end = NULL;
	long x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtol(v, &end, 10);
	return (!errno && end != v && !*end && x >= lo && x <= hi) ? x : dflt;
}

static int setup_pool(void)
{
	G.nbuf = (int)env_long(CVC_ENV_BUFFERS, 16, 2, 1024);
	G.bufsz = (size_t)env_long(CVC_ENV_BUFFER_MB, 4, 1, 256) << 20;
	G.arena = aligned_alloc(4096, G.bufsz * (size_t)G.nbuf);
	G.free_stack = calloc((size_t)G.nbuf, sizeof *G.free_stack);
	G.q = calloc((size_t)G.nbuf, sizeof *G.q);
	if (!G.arena || !G.free_stack || !G.q || cvci_graph_init(&G.graph, GRAPH_NODES))
		return -1;
	for (int i = 0; i < G.nbuf; i++)
		G.free_stack[i] = G.arena + (size_t)i * G.bufsz;
	G.nfree = G.nbuf;
	return 0;
}

static int open_spool(void)
{
	const char *dir = getenv(CVC_ENV_OUTDIR);
	char host[256] = "unknown", rk[32];
	const char *parent;
	int rank = env_rank();
	int n;

	G.env_rank = rank;
	if (!dir || !*dir)
		dir = ".";
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	for (char *p = host; *p; p++)
		if (*p == '/' || *p == ' ')
			*p = '_';
	if (rank >= 0)
		snprintf(rk, sizeof rk, "r%d", rank);
	else
		snprintf(rk, sizeof rk, "r-");
	mkdir(dir, 0755);
	/*
	 * cvc-HOST-PID-rRANK[.pPARENT].spool: the parent part lets each `cvc
	 * profile` (one per rank under mpirun/srun, sharing DIR) pick only the
	 * spools of its own descendants.
	 */
	parent = getenv(CVC_ENV_PARENT);
	if (parent && *parent && strspn(parent, "0123456789") == strlen(parent) &&
	    strlen(parent) < 12)
		n = snprintf(G.spool_path, sizeof G.spool_path, "%s/cvc-%s-%ld-%s.p%s.spool",
			     dir, host, (long)getpid(), rk, parent);
	else
		n = snprintf(G.spool_path, sizeof G.spool_path, "%s/cvc-%s-%ld-%s.spool", dir,
			     host, (long)getpid(), rk);
	if (n < 0 || (size_t)n >= sizeof G.spool_path)
		return -1;
	if (cvc_spool_open(G.spool_path, 1u << 20, &G.sp) != CVC_OK) {
		logmsg("cannot create '%s': %s; nothing will be recorded", G.spool_path,
		       strerror(errno));
		return -1;
	}
	if (cvci_decoder_init(&G.dec, G.sp) != CVC_OK)
		return -1;
	G.dec.cbname = cbname;
	/* API kinds enabled only for the external ids: their rows dropped */
	G.dec.api_drop = (G.acts_on & ~G.acts & CVC_PROF_DRIVER ? 1u : 0u) |
			 (G.acts_on & ~G.acts & CVC_PROF_RUNTIME ? 2u : 0u);
	{
		const char *run = getenv(CVC_ENV_RUN);
		char tool[64];
		uint32_t ver = 0;

		cuptiGetVersion(&ver);
		snprintf(tool, sizeof tool, "cvc %s, CUPTI %u", CVC_VERSION, (unsigned)ver);
		cvci_put_proc(&G.dec, rank, env_world(), getpid(), host,
			      run && *run ? run : "profile", tool);
	}
	/* the process record on disk at once: a spool killed before its first
	 * full buffer still materializes (with what the timed flushes wrote) */
	cvc_spool_flush(G.sp);
	return 0;
}

CVC_API int InitializeInjection(void);

CVC_API int InitializeInjection(void)
{
	static atomic_int once;
	uint32_t ver = 0;
	const char *acts = getenv(CVC_ENV_ACTIVITIES);
	char err[256];

	if (atomic_exchange(&once, 1))
		return 1;
	/*
	 * Records are cast to the structs of the headers we were built with,
	 * and CUPTI changes record layouts between minor versions: the
	 * libcupti in the process (maybe PyTorch's wheel, loaded first) must
	 * write ours (cvci_cupti_layout_ok).
	 */
	if (cuptiGetVersion(&ver) != CUPTI_SUCCESS)
		ver = 0;
	if (!cvci_cupti_layout_ok(ver, CUPTI_API_VERSION, err, sizeof err)) {
		logmsg("%s: record layouts differ, nothing recorded (rebuild cvc against that CUDA, "
		       "or put its libcupti first on LD_LIBRARY_PATH)%s", err, "");
		return 0;
	}
	G.acts = CVC_PROF_DEFAULT;
	if (acts && *acts && cvc_profile_parse_activities(acts, &G.acts, err, sizeof err)) {
		logmsg("%s%s", err, "; using the default activities");
		G.acts = CVC_PROF_DEFAULT;
	}
	/*
	 * CUPTI writes an external-correlation record only for an API record
	 * made inside the external region (NCCL's launch is cuLaunchKernelEx,
	 * a driver call): without the API kinds no NCCL size would ever join
	 * its kernel (issue 19 item 1).  They are enabled for that and their
	 * rows dropped unless asked for.
	 */
	G.acts_on = G.acts;
	if (G.acts & CVC_PROF_EXTCORR)
		G.acts_on |= CVC_PROF_DRIVER | CVC_PROF_RUNTIME;
	G.delay_s = env_double(CVC_ENV_DELAY);
	G.flush_ms = env_long(CVC_ENV_FLUSH_MS, 1000, 10, 60000);
	G.duration_s = env_double(CVC_ENV_DURATION);
	if (setup_pool() || open_spool())
		return 0;
	if (cuptiGetTimestamp(&G.t0_cupti) == CUPTI_SUCCESS) {
		meta_n("clock_start_cupti_ns", (int64_t)G.t0_cupti);
		meta_n("clock_start_realtime_ns", realtime_ns());
		/* Belt and braces for --delay/--duration: buffers may hold earlier records. */
		if (G.delay_s > 0 || G.duration_s > 0) {
			G.dec.win_start_ns = (int64_t)G.t0_cupti + (int64_t)(G.delay_s * 1e9);
			if (G.duration_s > 0)
				G.dec.win_end_ns = G.dec.win_start_ns + (int64_t)(G.duration_s * 1e9);
		}
	}
	meta_n("flush_period_ms", G.flush_ms);
	cvc_spool_flush(G.sp);
	if (pthread_create(&G.writer, NULL, writer_main, NULL) != 0)
		return 0;
	G.have_writer = 1;
	pthread_atfork(NULL, NULL, atfork_child);
	/*
	 * Subscribing first is how CUPTI says another client is attached
	 * (Nsight Systems, a profiler that subscribed at import): only one
	 * subscriber is allowed.  Then cvc records nothing, says so once, and
	 * still finishes its database so the run says why it is empty.
	 * Without a driver (only a test harness loads us without one) every
	 * call fails with CUPTI_ERROR_UNKNOWN: recorded, not printed.
	 */
	G.subscribe_result = (int)cuptiSubscribe(&G.subscriber, on_callback, NULL);
	if (G.subscribe_result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		logmsg("%s%s", "another CUPTI client is attached (Nsight Systems, torch.profiler, "
		       "a profiling daemon?)", "; cvc records nothing in this process");
		return arm_finish();
	}
	/* Any other refusal (CUPTI_ERROR_NOT_COMPATIBLE: a driver older than
	 * this CUPTI) with a driver here also leaves nothing to record */
	if (G.subscribe_result != CUPTI_SUCCESS && cvci_driver_loaded()) {
		if (cuptiGetResultString((CUptiResult)G.subscribe_result, &G.subscribe_why) !=
			    CUPTI_SUCCESS ||
		    !G.subscribe_why)
			G.subscribe_why = "an error CUPTI does not name";
		logmsg("CUPTI refused cvc's subscription (%s)%s", G.subscribe_why,
		       ": cvc records nothing in this process");
		return arm_finish();
	}
	if (cuptiActivityRegisterCallbacks(buf_requested, buf_completed) != CUPTI_SUCCESS) {
		logmsg("%s%s", "cuptiActivityRegisterCallbacks failed (another CUPTI client?)",
		       "; nothing recorded");
		return arm_finish();
	}
	/* CUPTI hands over partly filled buffers every flush period, not only
	 * full 4 MiB ones.  Not printed when refused (it is, without a
	 * driver): the spool is still flushed every period; run_meta says
	 * which held (written by finish(): the writer owns the spool by now). */
	G.cupti_flush_ok = cuptiActivityFlushPeriod((uint32_t)G.flush_ms) == CUPTI_SUCCESS;
	/* sizes of NCCL kernels replayed from CUDA graphs need the node ids */
	if (G.acts & CVC_PROF_EXTCORR)
		enable_graph_callbacks();
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
	if (G.delay_s > 0 || G.duration_s > 0) {
		if (pthread_create(&G.control, NULL, control_main, NULL) == 0) {
			G.have_control = 1;
			pthread_detach(G.control);
		}
	} else {
		enable_kinds(1);
	}
	return arm_finish();
}
