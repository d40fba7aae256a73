args: predict gemm --gpu "RTX 9999 Ultra" --m 64 --n 64 --k 64
exit: 2
stderr: error: predict: --gpu 'RTX 9999 Ultra': no GPU of that name or alias in the hardware catalog (add one with --catalog FILE
