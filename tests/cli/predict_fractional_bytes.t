args: predict allreduce --system dgx-h100 --bytes 0.5 --gpus 8
exit: 2
stderr: error: --bytes: expected a whole number of bytes, got '0.5'
