-- cvc trace database: version 1 -> 2.
-- Compiled into the binary (db/migrate_2.sql -> cvc_migrate_2_sql) and run
-- inside the transaction that sets user_version = 2.

-- Launches made inside an op kept with its shapes (op_shapes), found by CPU-time
-- nesting: the runtime call (cudaLaunchKernel, cuLaunchKernel, ...) ran on
-- the op's thread between its start and end.  Its kernels are the
-- activities of the same run and rank with this correlation id.  Needed for
-- traces whose kernels do not carry the op's External id (older Kineto
-- writes the correlation id there); written for every trace, so the two
-- ways of linking can be compared.
CREATE TABLE op_launches (
	shape_id INTEGER NOT NULL REFERENCES op_shapes(id) ON DELETE CASCADE,
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	rank INTEGER NOT NULL,
	correlation INTEGER NOT NULL,
	PRIMARY KEY (shape_id, correlation)
) WITHOUT ROWID;
CREATE INDEX op_launches_by_corr ON op_launches(run_id, rank, correlation);
