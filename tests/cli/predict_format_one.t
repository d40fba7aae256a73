args: predict allreduce --bytes 64MiB --gpus 16 --system dgx-h100 --format csv && "$cvc" predict gemm --gpu H100 --m 4096 --n 4096 --k 4096 --format json
exit: 0
stdout: collective,system,bytes,gpus,per_node,time_us,time_us_lo,time_us_hi,algbw_gbps,busbw_gbps,model
stdout: allreduce,dgx-h100,67108864,16,8,404.57
stdout: "gpu":"H100-SXM","dtype":"bf16","b":1,"m":4096,"n":4096,"k":4096,"time_us":201.087
