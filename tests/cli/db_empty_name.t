args: import --db '' $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz
exit: 2
stderr: error: --db: expected a file name, got ''
