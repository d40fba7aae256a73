args: predict membound --gpu H100 --class norm --bytes 1GiB --heads 8; a=$?; "$cvc" predict membound --gpu H100 --class norm --bytes 1GiB --dtype fp8; b=$?; "$cvc" predict attention --gpu H100 --heads 8 --head-dim 64 --seq 1024 --gpus 8; c=$?; test $a$b$c = 222 && exit 2; exit 1
exit: 2
stderr: error: predict: --heads does not apply to membound (it is attention's); see 'cvc predict --help'
stderr: error: predict: --dtype does not apply to membound (it is gemm's and attention's)
stderr: error: predict: --gpus does not apply to attention (it is a collective's)
