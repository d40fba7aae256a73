args: predict allreduce --bytes 64QB --gpus 8 --system dgx-a100
exit: 2
stderr: error: --bytes: unknown size unit in '64QB'
