args: import --db $TMP/nsys.db $SHARED/traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz
exit: 0
stdout: imported 1 file into run 1 of
stdout: 20 activities, 0 collectives, 22 ranges, 0 nccl-tests rows
