args: import -j 2 --db t.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz $SHARED/traces/hta-a100-80g-w16-rank0/rank0.json.gz
exit: 2
stderr: hta-a100-80g-w16-rank0/rank0.json.gz': rank 0 is already in run
