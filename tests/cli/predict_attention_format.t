args: predict attention --gpu A100 --b 2 --heads 32 --head-dim 128 --seq 4096 --format csv
exit: 0
stdout: gpu,dtype,backend,pass,b,heads,kv_heads,head_dim,seq,causal,time_us,time_us_lo,time_us_hi,tflops,model
stdout: A100-SXM-80GB,bf16,fa2,forward,2,32,32,128,4096,0,
stdout: fused-attention curves measured on A100-SXM-80GB (attention-bench) at its power limit
