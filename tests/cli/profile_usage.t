args: profile
exit: 2
stderr: error: profile: expected '--' and a command, e.g. 'cvc profile -- ./train'
