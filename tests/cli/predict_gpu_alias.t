args: predict gemm --gpu "NVIDIA A100-SXM4-40GB" --m 4096 --n 4096 --k 4096
exit: 0
stdout: bf16 on A100-SXM-40GB:
