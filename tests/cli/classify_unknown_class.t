args: version >/dev/null && printf 'gemm gemm\nfoo bar\n' > u.rules && "$cvc" classify --db nope.db --rules u.rules
exit: 2
stderr: error: 'u.rules': line 2: unknown class 'foo' (expected one of gemm, attention,
