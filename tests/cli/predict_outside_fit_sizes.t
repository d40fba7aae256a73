args: predict gemm --gpu H100 --m 16384 --n 16384 --k 16384
exit: 0
stdout: this shape lies outside the sizes it measured: priced at the default efficiency
