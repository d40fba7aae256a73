args: fit --db z.db /dev/zero; a=$?; yes | "$cvc" fit --db z2.db -; b=$?; test -e z.db -o -e z2.db && echo "a database was made"; test $a = 2 -a $b = 2 && exit 2; exit 1
exit: 2
stderr: error: '/dev/zero': byte 
stderr: expected at most 256 MiB from a pipe or device
stderr: error: '-': byte 
