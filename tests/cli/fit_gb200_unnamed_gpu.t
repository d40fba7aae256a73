args: fit --db g.db $SHARED/traces/nccl-scale/gb200x72_1rack_nvl72_coreweave_all_reduce_perf.txt; "$cvc" fit --db g.db --gpu GB200 $SHARED/traces/nccl-scale/gb200x72_1rack_nvl72_coreweave_all_reduce_perf.txt
exit: 0
stderr: warning: fit: GPU 'NVIDIA Graphics Device' is not in the hardware catalog
stdout: collective GB200
stdout: allreduce        72   72
