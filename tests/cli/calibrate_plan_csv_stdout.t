args: calibrate --plan --csv - --gpus 64 --gpu A100
exit: 0
stdout: kind,dtype,sub,b,m,n,k,heads,kv_heads,causal,backward,bytes,group,per_node,uses,scenarios,est_us,est_gpu_s
stdout: gemm,bf16,,1,
stdout: collective,,allreduce,
stderr: measured on 64 GPUs (8 per node); estimates for A100
