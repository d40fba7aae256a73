args: predict gemm --gpu A100-40 --m 64 --n 64 --k 64
exit: 2
stderr: error: predict: --gpu 'A100-40': no GPU of that name or alias in the hardware catalog; nearest: A100-SXM-40GB
