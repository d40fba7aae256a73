args: import --db two.db $SHARED/traces/pipit-nsys-sqlite-perlmutter && sqlite3 two.db "SELECT 'runs=' || count(*) FROM runs; SELECT 'ranks=' || count(*) FROM ranks"
exit: 0
stdout: imported 2 files into 2 runs of 'two.db'
stdout: runs=2
stdout: ranks=2
stderr: note: run 1 'perlmutter-cloverleaf-cuda.sqlite.gz': 1 Nsight Systems export, rank 0 of world size 1, job '16618307', NVIDIA A100-SXM4-80GB, host nid008553, started 2023-10-04 04:13:59 UTC
stderr: note: run 2 'saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz': 1 Nsight Systems export, NVIDIA A100-SXM4-40GB, host nid001608, started 2023-06-26 21:00:57 UTC
stderr: note: the files are 2 jobs by their own metadata, so 2 runs (--run NAME puts every file in one)
