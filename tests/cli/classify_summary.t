args: import --db t.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && "$cvc" classify --db t.db
exit: 0
stdout: total_us
stdout: allreduce
stdout: broadcast
stdout: conv
stdout: norm
stdout: total
