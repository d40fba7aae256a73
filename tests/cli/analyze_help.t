args: analyze --help
exit: 0
stdout: usage: cvc analyze
stdout: --step-regex RE
stdout: --collectives
