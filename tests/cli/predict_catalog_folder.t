args: predict gemm --gpu H100 --m 64 --n 64 --k 64 --catalog .
exit: 2
stderr: error: '.': expected a catalog file (CSV), got a folder
