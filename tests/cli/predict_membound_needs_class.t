args: predict membound --gpu H100 --bytes 1GiB; a=$?; "$cvc" predict membound --gpu H100 --class layernorm --bytes 1GiB; b=$?; "$cvc" predict membound --gpu H100 --class norm --bytes 0; c=$?; test $a$b$c = 222 && exit 2; exit 1
exit: 2
stderr: error: predict: membound needs --class NAME: elementwise, norm, reduction, copy, gather or optimizer
stderr: gather or optimizer (got 'layernorm')
stderr: error: predict: --bytes: expected at least 1 byte moved, got 0
