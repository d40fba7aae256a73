-- cvc trace database, schema version 1.
-- Compiled into the binary (db/schema.sql -> schema_sql.c).  Times are
-- integer nanoseconds; sizes are bytes.  Later versions add files
-- db/migrate_<N>.sql that take version N-1 to N; this file is never edited
-- once released, so old databases migrate by replaying those files.

CREATE TABLE runs (
	id INTEGER PRIMARY KEY,
	name TEXT UNIQUE,
	format TEXT,            -- kineto, nsys, nccl-tests, cupti, table
	source TEXT,            -- first source path
	tool_version TEXT,
	gpu_model TEXT,
	nccl_version TEXT,
	world_size INTEGER,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

CREATE TABLE run_meta (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	key TEXT NOT NULL,
	value TEXT,
	PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE sources (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	path TEXT NOT NULL,
	format TEXT NOT NULL,
	rank INTEGER,
	events INTEGER,
	imported_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);

CREATE TABLE ranks (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	host TEXT,
	pid INTEGER,
	clock_offset_ns INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, rank)
) WITHOUT ROWID;

CREATE TABLE devices (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	device INTEGER NOT NULL,
	name TEXT,
	sm_count INTEGER,
	total_mem_bytes INTEGER,
	cc_major INTEGER,
	cc_minor INTEGER,
	mem_bw_gbps REAL,
	clock_khz INTEGER,
	PRIMARY KEY (run_id, rank, device)
) WITHOUT ROWID;

-- Kernel names and other long repeated text, interned.
CREATE TABLE strings (
	id INTEGER PRIMARY KEY,
	value TEXT NOT NULL UNIQUE
);

-- kind: 1 kernel, 2 memcpy, 3 memset.
CREATE TABLE activities (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL,
	rank INTEGER NOT NULL,
	device INTEGER NOT NULL,
	kind INTEGER NOT NULL,
	name_id INTEGER NOT NULL,
	start_ns INTEGER NOT NULL,
	end_ns INTEGER NOT NULL,
	stream INTEGER,
	context INTEGER,
	correlation INTEGER,
	external_id INTEGER,
	grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
	block_x INTEGER, block_y INTEGER, block_z INTEGER,
	registers INTEGER,
	shared_mem_bytes INTEGER,
	bytes INTEGER,
	copy_kind INTEGER
);
CREATE INDEX activities_by_device ON activities(run_id, rank, device, start_ns);

-- Sizes of collective kernels, where the trace gives them.
CREATE TABLE collectives (
	activity_id INTEGER PRIMARY KEY REFERENCES activities(id) ON DELETE CASCADE,
	coll TEXT,
	dtype TEXT,
	in_nelems INTEGER,
	out_nelems INTEGER,
	bytes INTEGER,
	group_size INTEGER,
	pg_name TEXT,
	pg_desc TEXT,
	pg_ranks TEXT,
	algo TEXT,
	proto TEXT,
	root INTEGER
);

-- kind: 1 host (user_annotation, NVTX push/pop on CPU), 2 GPU span
-- (gpu_user_annotation), 3 NVTX from Nsight Systems / CUPTI markers.
CREATE TABLE ranges (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL,
	rank INTEGER NOT NULL,
	device INTEGER NOT NULL,   -- -1 for host ranges
	kind INTEGER NOT NULL,
	name_id INTEGER NOT NULL,
	start_ns INTEGER NOT NULL,
	end_ns INTEGER NOT NULL,
	tid INTEGER,
	domain TEXT
);
CREATE INDEX ranges_by_run ON ranges(run_id, rank, kind);

CREATE TABLE nccl_tests (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	op TEXT NOT NULL,
	nranks INTEGER,
	size_bytes INTEGER NOT NULL,
	count INTEGER,
	dtype TEXT,
	redop TEXT,
	root INTEGER,
	in_place INTEGER NOT NULL,
	time_us REAL NOT NULL,
	algbw_gbps REAL,
	busbw_gbps REAL,
	wrong INTEGER
);

-- Operator classes (gemm, attention, ..., allreduce) and the class each
-- interned kernel name falls in under the rule set last applied.
CREATE TABLE op_classes (
	id INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	is_comm INTEGER NOT NULL
);

CREATE TABLE name_class (
	name_id INTEGER PRIMARY KEY REFERENCES strings(id),
	class_id INTEGER NOT NULL REFERENCES op_classes(id),
	rule INTEGER,              -- index of the matching rule, NULL = default
	coll TEXT,
	algo TEXT,
	proto TEXT,
	dtype TEXT
);

-- Fitted operator performance models (models/fit.c).  kind: gemm,
-- collective, membound, attention; op: dtype (gemm) or collective name;
-- params_json: {"form":..., "p":[...]} (docs/MODELS.md); domain_json:
-- {"min":..,"max":..} in FLOPs (gemm) or bytes (collectives); mape and
-- extrap_mape in percent (extrap: fit on the smaller half of the sizes,
-- predict the larger half; NULL when too few points).
CREATE TABLE models (
	id INTEGER PRIMARY KEY,
	kind TEXT NOT NULL,
	gpu TEXT NOT NULL,
	op TEXT NOT NULL,
	system TEXT NOT NULL DEFAULT '',
	nranks INTEGER NOT NULL DEFAULT 0,
	gpus_per_node INTEGER NOT NULL DEFAULT 0,
	params_json TEXT NOT NULL,
	domain_json TEXT NOT NULL,
	source TEXT NOT NULL,
	n_points INTEGER NOT NULL,
	r2 REAL,
	mape REAL,
	extrap_mape REAL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX models_by_gpu ON models(kind, gpu, op);

-- The measured rows each model was fitted from.
CREATE TABLE model_points (
	model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
	b INTEGER, m INTEGER, n INTEGER, k INTEGER,
	bytes INTEGER,
	nranks INTEGER,
	time_us REAL NOT NULL,
	tag TEXT
);
CREATE INDEX model_points_by_model ON model_points(model_id);

-- GEMM-like CPU ops of Kineto traces recorded with shapes (record_shapes):
-- aten::mm, addmm, bmm, baddbmm, matmul, linear, _scaled_mm.  dims and
-- types are the trace's "Input Dims" / "Input type" JSON text, unchanged;
-- the op's kernels are the activities with the same (run_id, rank,
-- external_id).  Fitting source for GEMM models (models/tracefit.c).
CREATE TABLE op_shapes (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	external_id INTEGER NOT NULL,
	name_id INTEGER NOT NULL,
	dims TEXT NOT NULL,
	types TEXT
);
CREATE INDEX op_shapes_by_ext ON op_shapes(run_id, rank, external_id);
