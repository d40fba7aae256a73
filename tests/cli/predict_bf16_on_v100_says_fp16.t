args: predict gemm --gpu V100 --m 4096 --n 4096 --k 4096 --dtype bf16
exit: 0
stderr: note: V100-SXM2-32GB has no bf16 tensor path: priced on its fp16 one
stdout: bf16 on V100-SXM2-32GB
