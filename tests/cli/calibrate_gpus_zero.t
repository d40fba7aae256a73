args: calibrate --plan --gpus 0; a=$?; "$cvc" calibrate --plan --gpus-per-node -1; b=$?; test $a = 2 -a $b = 2 && exit 2; exit 1
exit: 2
stderr: error: calibrate: --gpus: expected 1..2^20, got 0
stderr: error: calibrate: --gpus-per-node: expected 1..1024, got -1
