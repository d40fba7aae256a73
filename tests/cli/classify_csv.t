args: import --db t.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && "$cvc" classify --db t.db --format csv
exit: 0
stdout: class,count,total_us,share_pct
stdout: allreduce,15,
stdout: broadcast,6,
