args: validate "$CASES/../data/axonn-80b-perlmutter.csv"
exit: 0
stderr: 1 rows read, 1 with a measured figure; 1 projected (100.0% of those), 0 not projected
stdout: measured: tflops_per_gpu
