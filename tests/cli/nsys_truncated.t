args: import --db $TMP/cut.db $(gzip -dc "$SHARED/traces/pipit-nsys-sqlite-perlmutter/saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz" | head -c 800000 > $TMP/cut.sqlite; echo $TMP/cut.sqlite)
exit: 2
stderr: cut.sqlite': byte 800000: truncated SQLite file
