args: version >/dev/null; printf 'm,n,k\n1024,1024,1024\n16384,16384,16384\n' > s.csv; "$cvc" predict gemm --gpu H100 --csv s.csv
exit: 0
stderr: note: 1 of 2 shapes lie outside the sizes the model measured: the default efficiency priced them, not the fit
