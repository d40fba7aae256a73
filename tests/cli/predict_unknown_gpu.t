args: predict gemm --gpu "RTX 9999 Ultra" --m 64 --n 64 --k 64
exit: 2
stderr: error: predict: 'RTX 9999 Ultra' is not in the hardware catalog
