args: help analyze
exit: 0
stdout: usage: cvc analyze
stdout: --format FMT
