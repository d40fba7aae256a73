args: import --db an_ddp.db --run ddp $SHARED/traces/hta-ddp-v100-2rank/df_index_resolver.json.gz >/dev/null && "$cvc" analyze --db an_ddp.db --format csv
exit: 0
stdout: run,rank,device,kernels,comm_kernels,busy_us,compute_us,comm_us,hidden_comm_us,exposed_comm_us,overlap_pct,idle_us,span_us,comm_share,exposed_share,skew_us
stdout: ddp,1,1,19370,2020,1000613.000,620516.000,357343.000,0.000,357343.000,0.000,732352.000,1732965.000,0.206203,0.206203,
