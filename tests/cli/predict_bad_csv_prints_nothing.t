args: version >/dev/null; printf 'm,n,k\n64,64,64\n64,x,64\n' > bad.csv; for f in csv table json; do "$cvc" predict gemm --gpu H100 --csv bad.csv --format $f >out.$f 2>err.$f; test $? = 2 || exit 1; test -s out.$f && exit 3; grep -q 'model:' err.$f && exit 4; done; cat err.csv >&2; exit 2
exit: 2
stderr: error: 'bad.csv': line 3: expected a positive integer n, got 'x'
