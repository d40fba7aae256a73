args: import --db an_coll.db --run nccl $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && "$cvc" analyze --db an_coll.db --collectives --format csv
exit: 0
stdout: run,rank,coll,bytes,group_size,count,total_us,mean_us,algbw_gbps,busbw_gbps
stdout: nccl,0,allreduce,26255360,2,3,
stdout: nccl,0,allreduce,8196000,2,3,
stdout: nccl,0,broadcast,424,2,3,
stdout: nccl,0,broadcast,212480,2,3,
