args: import --db sk.db $SHARED/traces/param-dlrm-8xv100 >/dev/null 2>&1 && "$cvc" analyze --db sk.db --format csv
exit: 0
stdout: run,rank,device,kernels,comm_kernels,busy_us,compute_us,comm_us,hidden_comm_us,exposed_comm_us,overlap_pct,idle_us,span_us,comm_share,exposed_share,skew_us
