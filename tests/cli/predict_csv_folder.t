args: predict gemm --gpu H100 --csv .
exit: 2
stderr: error: '.': expected a file of shapes (m,n,k[,b]), got a folder
