args: import --db er.db $SHARED/traces/pipit-nsys-sqlite-perlmutter >/dev/null 2>&1 && "$cvc" export --db er.db --perfetto er.json; rc=$?; test -e er.json && echo "wrote er.json" || echo "no er.json"; exit $rc
exit: 2
stderr: error: export: 'er.db' holds 2 runs, each on its own clock: name one with --run ('perlmutter-cloverleaf-cuda.sqlite.gz', 'saxpy-mpi-cuda_nsys_perlmutter0.sqlite.gz')
stdout: no er.json
