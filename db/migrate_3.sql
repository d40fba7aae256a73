-- cvc trace database: version 2 -> 3.
-- Compiled into the binary (db/migrate_3.sql -> cvc_migrate_3_sql) and run
-- inside the transaction that sets user_version = 3.

-- nccl-tests rows: ranks per host as the log shows them (device lines' host
-- names or the launcher; NULL when the log does not say), and the NCCL
-- algorithm the command line forced (NULL: NCCL's own choice).  Collective
-- models place a log on the topology with them (docs/MODELS.md
-- "Collectives").
ALTER TABLE nccl_tests ADD COLUMN gpus_per_node INTEGER;
ALTER TABLE nccl_tests ADD COLUMN algo TEXT;
