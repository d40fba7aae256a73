args: validate "$CASES/../data/axonn-80b-perlmutter.csv"
exit: 0
stderr: 1 rows, 1 projected (100.0%)
stdout: measured: tflops_per_gpu
