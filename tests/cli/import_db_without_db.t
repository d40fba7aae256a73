args: version >/dev/null && mkdir -p nodb && cd nodb && "$cvc" import --db y.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null 2>&1 && "$cvc" import y.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz; rc=$?; test -e cvc.db && echo "made cvc.db" || echo "no cvc.db made"; exit $rc
exit: 2
stderr: error: import: 'y.db' is a database, and no --db names the one to import into: give it with --db ('cvc import --db y.db FILES...')
stdout: no cvc.db made
