/*
 * test_cupti_graph.c - NCCL sizes for kernels replayed from CUDA graphs
 * (issue 19 item 8), without a GPU: the resource callbacks' tracker
 * (graph.c) with synthetic node ids, then a rank whose NCCL call was
 * captured into a graph and replayed three times: real CUPTI 13 records
 * through the decoder, the tracker's records, materialized and checked;
 * and a version 1 spool, which has no graph records, read as before.
 * Linked into test_cupti_decode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <cupti.h>
#include <sqlite3.h>

#include "cvc/cvc_db.h"
#include "cvc/cvc_profile.h"
#include "decode.h"
#include "graph.h"
#include "test_cupti_int.h"
#include "testutil.h"

/* ---- the tracker: what a callback spools ------------------------------------------- */

/* The tracker of the three tests below: a table of 16 remembered nodes. */
static struct cvci_graph tg;

static void tracker_init(void)
{
	cr_assert_eq(cvci_graph_init(&tg, 16), CVC_OK);
}

static void tracker_fini(void)
{
	cvci_graph_release(&tg);
}

Test(cupti_graph, created_inside_an_nccl_launch_is_spooled,
     .init = tracker_init, .fini = tracker_fini)
{
	struct cvc_spool_graph r = {0, 0};
	uint32_t type = 0;

	cr_assert_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 1, 0x51, 0, 7, &type, &r), 1);
	cr_expect_eq(type, CVC_SPOOL_GNODE);
	cr_expect_eq(r.node_id, 0x51);
	cr_expect_eq(r.ref, 7);
	/* outside an NCCL launch (a GEMM captured on the same stream): nothing */
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 1, 0x52, 0, 0, &type, &r), 0);
	/* another resource callback id: nothing */
	cr_expect_eq(cvci_graph_event(&tg, 9, 1, 0x53, 0, 7, &type, &r), 0);
	cr_expect_eq(tg.id_failed, 0);
}

Test(cupti_graph, clones_of_nccl_nodes_and_their_clones_are_spooled,
     .init = tracker_init, .fini = tracker_fini)
{
	struct cvc_spool_graph r = {0, 0};
	uint32_t type = 0;

	cr_assert_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 1, 0x51, 0, 7, &type, &r), 1);
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 1, 0x52, 0, 0, &type, &r), 0);
	/* cudaGraphInstantiate clones both: only the NCCL node's clone is spooled */
	cr_assert_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 1, 0x9051, 0x51, 0, &type, &r),
		     1);
	cr_expect_eq(type, CVC_SPOOL_GCLONE);
	cr_expect_eq(r.node_id, 0x9051);
	cr_expect_eq(r.ref, 0x51);
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 1, 0x9052, 0x52, 0, &type, &r),
		     0);
	/* a clone of the clone (cudaGraphClone, then instantiate) is followed */
	cr_assert_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 1, 0xA051, 0x9051, 0, &type,
				      &r), 1);
	cr_expect_eq(r.node_id, 0xA051);
	cr_expect_eq(r.ref, 0x9051);
	cvci_graph_release(&tg); /* again in .fini: release is idempotent */
	/* released (the process is finishing): nothing, no crash */
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 1, 0x61, 0, 8, &type, &r), 0);
}

Test(cupti_graph, failed_id_lookups_and_a_full_table_are_counted,
     .init = tracker_init, .fini = tracker_fini)
{
	struct cvc_spool_graph r = {0, 0};
	uint32_t type = 0;
	int spooled = 0;

	/* cuptiGetGraphNodeId failed: counted, nothing spooled */
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 0, 0, 0, 7, &type, &r), 0);
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 0, 0, 0, 0, &type, &r), 0);
	cr_expect_eq(tg.id_failed, 2);
	/* 17 NCCL nodes in a table for 16: all spooled, the 17th not remembered */
	for (uint64_t n = 1; n <= 17; n++)
		spooled += cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CREATED, 1, 0x100 + n, 0, n,
					    &type, &r);
	cr_expect_eq(spooled, 17);
	cr_expect_eq(tg.untracked, 1);
	/* a remembered node's clone is still spooled (materialize needs no
	 * more), but not remembered: a clone of it would be lost */
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 1, 0x9101, 0x101, 0, &type,
				      &r), 1);
	cr_expect_eq(tg.untracked, 2);
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 1, 0xA101, 0x9101, 0, &type,
				      &r), 0);
	cr_expect_eq(cvci_graph_event(&tg, CVCI_CBID_GRAPHNODE_CLONED, 1, 0x9111, 0x111, 0, &type,
				      &r), 0, "the 17th node was not remembered");
}

/* ---- a captured NCCL call, replayed three times, materialized ---------------------- */

/* A replayed kernel: the cudaGraphLaunch's correlation, the clone's node id. */
static void replay_kernel(struct ct_buf *c, const char *name, uint64_t start, uint32_t corr,
			  uint64_t node)
{
	CUpti_ActivityKernel10 *k = ct_add(c, sizeof *k, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);

	k->start = (uint64_t)T0 + start;
	k->end = k->start + 40000;
	k->completed = k->end;
	k->deviceId = 0;
	k->contextId = 1;
	k->streamId = 13;
	k->correlationId = corr;
	k->gridX = k->gridY = k->gridZ = 1;
	k->blockX = 512;
	k->blockY = k->blockZ = 1;
	k->name = name;
	k->graphNodeId = node;
	k->graphId = 4;
}

/* The tracker's answer to one callback, spooled as the writer would. */
static void callback(struct cvci_decoder *d, struct cvci_graph *g, uint32_t cbid,
		     uint64_t node, uint64_t orig, uint64_t launch)
{
	struct cvc_spool_graph r;
	uint32_t type = 0;

	if (cvci_graph_event(g, cbid, 1, node, orig, launch, &type, &r))
		cr_assert_eq(cvc_spool_put(d->sp, type, &r, sizeof r), CVC_OK);
}

/*
 * Rank 0 of dir/base.spool -> dir/base.db: NCCL launch 1 (an AllReduce of
 * 4M bf16 on 8 ranks) captured into a graph with a GEMM; the graph
 * instantiated and replayed three times (cudaGraphLaunch correlations
 * 1001..1003).  With stray, one more NCCL kernel replays from a node no
 * NCCL launch made (a graph captured without the plugin).
 */
static void graph_rank(const char *dir, const char *base, int stray, struct run_out *o)
{
	static struct ct_buf cap, rep;
	struct cvc_spool_coll coll;
	struct cvci_graph g;
	CUpti_ActivityAPI *api;
	CUpti_ActivityExternalCorrelation *e;
	cvc_spool *sp = NULL;
	char spool[4096], err[512];

	cap.used = rep.used = 0;
	snprintf(spool, sizeof spool, "%s/%s.spool", dir, base);
	snprintf(o->db, sizeof o->db, "%s/%s.db", dir, base);
	cr_assert_eq(cvc_spool_open(spool, 1u << 16, &sp), CVC_OK);
	cr_assert_eq(cvci_decoder_init(&o->dec, sp), CVC_OK);
	o->dec.api_drop = 1; /* driver rows enabled only for the external ids */
	cr_assert_eq(cvci_graph_init(&g, 64), CVC_OK);
	cvci_put_proc(&o->dec, 0, 8, 4000, "node07", "graphrun", "cvc test, CUPTI 130001");
	/* the plugin's launch record (inject.c's collective queue) */
	memset(&coll, 0, sizeof coll);
	coll.launch_id = 1;
	coll.func_sid = cvci_intern(&o->dec, "AllReduce", 9);
	coll.dtype_sid = cvci_intern(&o->dec, "ncclBfloat16", 12);
	coll.count = 4194304;
	coll.bytes = 8388608;
	coll.root = -1;
	coll.nranks = 8;
	coll.ncalls = 1;
	cr_assert_eq(cvc_spool_put(sp, CVC_SPOOL_COLL, &coll, sizeof coll), CVC_OK);
	/* capture: NCCL's cuLaunchKernelEx inside launch 1's external id; the
	 * node it creates is 0x51; the GEMM captured next to it, 0x52 */
	api = ct_add(&cap, sizeof *api, CUPTI_ACTIVITY_KIND_DRIVER);
	api->cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
	api->start = (uint64_t)T0 + 1000;
	api->end = (uint64_t)T0 + 5000;
	api->processId = 4000;
	api->threadId = 4001;
	api->correlationId = 900;
	e = ct_add(&cap, sizeof *e, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
	e->externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
	e->externalId = 1;
	e->correlationId = 900;
	callback(&o->dec, &g, CVCI_CBID_GRAPHNODE_CREATED, 0x51, 0, 1);
	callback(&o->dec, &g, CVCI_CBID_GRAPHNODE_CREATED, 0x52, 0, 0);
	/* cudaGraphInstantiate: the executable graph's clones */
	callback(&o->dec, &g, CVCI_CBID_GRAPHNODE_CLONED, 0x9051, 0x51, 0);
	callback(&o->dec, &g, CVCI_CBID_GRAPHNODE_CLONED, 0x9052, 0x52, 0);
	/* three replays: a GEMM and the AllReduce each */
	for (uint32_t i = 0; i < 3; i++) {
		replay_kernel(&rep, gemm_name, 1000000 * (i + 1), 1001 + i, 0x9052);
		replay_kernel(&rep, nccl_name, 1000000 * (i + 1) + 50000, 1001 + i, 0x9051);
	}
	if (stray)
		replay_kernel(&rep, nccl_name, 5000000, 1004, 0x9099);
	cr_assert_eq(cvci_decode(&o->dec, cap.b, cap.used), 2);
	cr_assert_eq(cvci_decode(&o->dec, rep.b, rep.used), (size_t)(6 + stray));
	cvci_put_meta(&o->dec, "nccl_graph_captured_calls", 1);
	cvci_graph_release(&g);
	cr_assert_eq(cvc_spool_close(sp), CVC_OK);
	cvci_decoder_release(&o->dec);
	cr_assert_eq(cvc_profile_materialize(spool, o->db, &o->st, err, sizeof err), CVC_OK, "%s",
		     err);
}

/* `cvc analyze` of db warns with want on stderr. */
static void analyze_warns(const char *db, const char *want)
{
	char args[4400], *err = NULL;

	snprintf(args, sizeof args, "analyze --db '%s'", db);
	tu_cvc(args, NULL, &err);
	cr_expect(err && strstr(err, want), "%s: want '%s' in: %s", args, want, err);
	free(err);
}

Test(cupti_graph, replayed_kernels_get_the_captured_size)
{
	struct run_out o;
	sqlite3 *sq;

	graph_rank(tu_tmpdir(), "cvc-node07-4000-r0", 1, &o);
	cr_expect_eq(o.st.activities, 7);
	cr_expect_eq(o.st.collectives, 3);
	cr_expect_eq(o.st.graph_replay_joined, 3);
	sq = ct_open_ro(o.db);
	/* every replay of the AllReduce: the captured call's size */
	ct_expect(sq, "SELECT group_concat(x, ';') FROM (SELECT a.correlation||'|'||coll||'|'||"
		   "dtype||'|'||in_nelems||'|'||c.bytes||'|'||group_size AS x FROM collectives c "
		   "JOIN activities a ON a.id=c.activity_id ORDER BY a.correlation)",
	       "1001|AllReduce|ncclBfloat16|4194304|8388608|8;"
	       "1002|AllReduce|ncclBfloat16|4194304|8388608|8;"
	       "1003|AllReduce|ncclBfloat16|4194304|8388608|8");
	/* the GEMMs (a node no NCCL launch made) and the stray NCCL kernel: none */
	ct_expect(sq, "SELECT count(*) FROM activities a JOIN strings s ON s.id=a.name_id WHERE "
		   "s.value LIKE 'sm90%' AND a.id NOT IN (SELECT activity_id FROM collectives)", "3");
	ct_expect(sq, "SELECT count(*) FROM collectives c JOIN activities a ON a.id=c.activity_id "
		   "WHERE a.correlation=1004", "0");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nccl_graph_replay_joined'", "3");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nccl_graph_replay_unjoined'", "1");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nccl_launches_unjoined'", "0");
	sqlite3_close(sq);
	analyze_warns(o.db, "1 NCCL call(s) were captured into CUDA graphs: 3 replayed NCCL "
			    "kernel(s) carry their captured sizes, 1 carry none");
}

Test(cupti_graph, all_replays_joined_is_what_analyze_says)
{
	struct run_out o;
	sqlite3 *sq;

	graph_rank(tu_tmpdir(), "cvc-node07-4000-r0", 0, &o);
	cr_expect_eq(o.st.graph_replay_joined, 3);
	sq = ct_open_ro(o.db);
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nccl_graph_replay_unjoined'", "0");
	sqlite3_close(sq);
	analyze_warns(o.db, "1 NCCL call(s) were captured into CUDA graphs: all 3 replayed NCCL "
			    "kernel(s) carry their captured sizes");
}

/* ---- damaged and old spools --------------------------------------------------------- */

/* A spool file with just the header of version v. */
static void spool_header(const char *path, uint32_t v)
{
	FILE *f = fopen(path, "wb");
	uint32_t reserved = 0;

	cr_assert(f);
	cr_assert_eq(fwrite(CVC_SPOOL_MAGIC, 8, 1, f), 1);
	cr_assert_eq(fwrite(&v, 4, 1, f), 1);
	cr_assert_eq(fwrite(&reserved, 4, 1, f), 1);
	cr_assert_eq(fclose(f), 0);
}

static void put_str(const char *path, uint32_t sid, const char *s)
{
	char buf[512];
	size_t n = strlen(s);

	cr_assert(n + 4 <= sizeof buf);
	memcpy(buf, &sid, 4);
	memcpy(buf + 4, s, n);
	ct_append_rec(path, CVC_SPOOL_STR, buf, (uint32_t)(n + 4));
}


/* A 500 ns kernel record (name 6) at T0 with correlation corr, launched by
 * graph node node (0: not from a graph). */
static void kernel_rec(struct cvc_spool_act *k, uint32_t corr, uint64_t node)
{
	memset(k, 0, sizeof *k);
	k->kind = CVC_ACT_KERNEL;
	k->start_ns = T0;
	k->end_ns = T0 + 500;
	k->correlation = corr;
	k->name_sid = 6;
	k->graph_node_id = node;
}

/* Strings 1..6 and the process record, as every spool starts. */
static void spool_start(const char *path, uint32_t v)
{
	static const char *const strs[] = {"host", "oldrun", "cvc 0.x", "AllReduce",
					   "ncclFloat32", nccl_name};
	struct cvc_spool_proc p = {0, 2, 4242, 1, 2, 3, 0};

	spool_header(path, v);
	for (uint32_t i = 0; i < 6; i++)
		put_str(path, i + 1, strs[i]);
	ct_append_rec(path, CVC_SPOOL_PROC, &p, sizeof p);
}

Test(cupti_graph, version_1_spool_materializes_with_the_old_counts)
{
	const char *dir = tu_tmpdir();
	char spool[4096], db[4200], err[512] = "";
	struct cvc_spool_act k;
	struct cvc_spool_extcorr e = {500, CVC_EXTCORR_NCCL_LAUNCH, 1};
	struct cvc_spool_coll c1 = {1, 4, 5, 1024, 4096, -1, 2, 1, 0};
	struct cvc_spool_coll c2 = {2, 4, 5, 2048, 8192, -1, 2, 1, 0};
	cvc_materialize_stats st;
	sqlite3 *sq;

	snprintf(spool, sizeof spool, "%s/v1.spool", dir);
	snprintf(db, sizeof db, "%s/v1.db", dir);
	spool_start(spool, 1);
	kernel_rec(&k, 500, 0);
	k.stream = 13;
	/* version 1 wrote the ACT record without graph_node_id */
	ct_append_rec(spool, CVC_SPOOL_ACT, &k, CVC_SPOOL_ACT_V1_SIZE);
	ct_append_rec(spool, CVC_SPOOL_EXTCORR, &e, sizeof e);
	ct_append_rec(spool, CVC_SPOOL_COLL, &c1, sizeof c1);
	ct_append_rec(spool, CVC_SPOOL_COLL, &c2, sizeof c2); /* never launched: unjoined */
	cr_assert_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(st.activities, 1);
	cr_expect_eq(st.collectives, 1);
	cr_expect_eq(st.graph_replay_joined, 0);
	sq = ct_open_ro(db);
	ct_expect(sq, "SELECT a.correlation||'|'||coll||'|'||c.bytes FROM collectives c JOIN "
		   "activities a ON a.id=c.activity_id", "500|AllReduce|4096");
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nccl_launches_unjoined'", "1");
	ct_expect(sq, "SELECT count(*) FROM run_meta WHERE key LIKE 'nccl_graph_replay%'", "0");
	sqlite3_close(sq);
}

Test(cupti_graph, graph_records_in_a_version_1_spool_are_refused)
{
	const char *dir = tu_tmpdir();
	char spool[4096], db[4200], err[512] = "";
	struct cvc_spool_graph g = {0x51, 1};

	snprintf(spool, sizeof spool, "%s/bad.spool", dir);
	snprintf(db, sizeof db, "%s/bad.db", dir);
	spool_start(spool, 1);
	ct_append_rec(spool, CVC_SPOOL_GNODE, &g, sizeof g);
	cr_expect_eq(cvc_profile_materialize(spool, db, NULL, err, sizeof err), CVC_ERR_FORMAT);
	cr_expect(strstr(err, "expected a record type in 1..9"), "%s", err);
	cr_expect_neq(access(db, F_OK), 0, "no database is left");
	/* a version 2 ACT record is the longer one */
	spool_start(spool, 2);
	{
		struct cvc_spool_act k;

		memset(&k, 0, sizeof k);
		ct_append_rec(spool, CVC_SPOOL_ACT, &k, CVC_SPOOL_ACT_V1_SIZE);
	}
	cr_expect_eq(cvc_profile_materialize(spool, db, NULL, err, sizeof err), CVC_ERR_FORMAT);
	cr_expect(strstr(err, "expected the record length of its type"), "%s", err);
	spool_header(spool, 3);
	cr_expect_eq(cvc_profile_materialize(spool, db, NULL, err, sizeof err), CVC_ERR_FORMAT);
	cr_expect(strstr(err, "expected spool version 1 or 2"), "%s", err);
}

Test(cupti_graph, a_loop_of_clones_ends_unjoined)
{
	const char *dir = tu_tmpdir();
	char spool[4096], db[4200], err[512] = "";
	struct cvc_spool_graph a = {0x71, 0x72}, b = {0x72, 0x71};
	struct cvc_spool_coll c = {1, 4, 5, 1024, 4096, -1, 2, 1, 0};
	struct cvc_spool_act k;
	cvc_materialize_stats st;
	sqlite3 *sq;

	snprintf(spool, sizeof spool, "%s/loop.spool", dir);
	snprintf(db, sizeof db, "%s/loop.db", dir);
	spool_start(spool, 2);
	ct_append_rec(spool, CVC_SPOOL_GCLONE, &a, sizeof a);
	ct_append_rec(spool, CVC_SPOOL_GCLONE, &b, sizeof b);
	ct_append_rec(spool, CVC_SPOOL_COLL, &c, sizeof c);
	kernel_rec(&k, 77, 0x71);
	ct_append_rec(spool, CVC_SPOOL_ACT, &k, sizeof k);
	cr_assert_eq(cvc_profile_materialize(spool, db, &st, err, sizeof err), CVC_OK, "%s", err);
	cr_expect_eq(st.collectives, 0);
	sq = ct_open_ro(db);
	ct_expect(sq, "SELECT value FROM run_meta WHERE key='nccl_graph_replay_unjoined'", "1");
	sqlite3_close(sq);
}
