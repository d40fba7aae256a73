args: version >/dev/null; printf 'm,n,k\n64,64,64,5,6\n' > wide.csv; "$cvc" predict gemm --gpu H100-SXM --csv wide.csv -f csv; a=$?; "$cvc" predict gemm --gpu H100-SXM --csv /dev/zero; b=$?; test $a = 2 -a $b = 2 && exit 2; exit 1
exit: 2
stderr: error: 'wide.csv': line 2: expected 3 fields, as the header has, got 5
stderr: error: '/dev/zero': line 1: expected text, got a NUL byte
