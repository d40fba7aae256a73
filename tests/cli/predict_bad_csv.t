args: version >/dev/null; printf 'm,n,k\n64,x,64\n' > badshapes.csv; "$cvc" predict gemm --gpu H100 --csv badshapes.csv
exit: 2
stderr: error: 'badshapes.csv': line 2: expected a positive integer n, got 'x'
