-- cvc trace database: version 3 -> 4.
-- Compiled into the binary (db/migrate_4.sql -> cvc_migrate_4_sql) and run
-- inside the transaction that sets user_version = 4.

-- When the host made the call that launched each activity (cudaLaunchKernel,
-- cudaMemcpyAsync, cuLaunchKernelEx, ...: the runtime or driver record
-- with the activity's correlation id), in the clock of the rank's host
-- ranges; NULL when the trace has no such record (a database made before
-- version 4, a trace without runtime records, work queued before the host
-- trace began).  `cvc analyze --by step` assigns an activity, whole, to the
-- step whose host range holds its launch (HTA's iteration of a kernel),
-- where the GPU may run far behind the CPU.
ALTER TABLE activities ADD COLUMN launch_ns INTEGER;
