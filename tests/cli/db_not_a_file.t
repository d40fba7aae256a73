args: version >/dev/null; mkdir -p adir; "$cvc" import --db adir $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz; a=$?; "$cvc" import --db /dev/null $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz; b=$?; "$cvc" import --db nofolder/x.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz; c=$?; test $a = 2 -a $b = 2 -a $c = 2 && exit 2; exit 1
exit: 2
stderr: error: 'adir': cannot open database: expected a file, got a directory
stderr: error: '/dev/null': cannot open database: expected a file, got a device or pipe
stderr: error: 'nofolder/x.db': cannot open database: no such folder
