args: import --db $TMP/kineto_trunc.db $(printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k"' > $TMP/kineto_trunc.json; echo $TMP/kineto_trunc.json)
exit: 2
stderr: error: '
stderr: kineto_trunc.json': byte 57: unexpected end of file, expected '}'
