args: calibrate --plan --gpus 4 --gpus-per-node 8
exit: 2
stderr: error: calibrate: --gpus-per-node 8 exceeds --gpus 4
