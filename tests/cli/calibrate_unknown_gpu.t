args: calibrate --plan --gpu Z9000
exit: 2
stderr: error: calibrate: GPU 'Z9000' is not in the hardware catalog
