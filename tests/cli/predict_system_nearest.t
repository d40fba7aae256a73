args: predict allreduce --bytes 1GiB --gpus 16 --system dgx-h1000
exit: 2
stderr: error: predict: --system 'dgx-h1000': no system of that name or alias in the hardware catalog; nearest: dgx-h100
