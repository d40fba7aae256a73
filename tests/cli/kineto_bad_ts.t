args: import --db $TMP/kineto_bad.db $(printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "ts": "abc", "dur": 1}]}' > $TMP/kineto_bad_ts.json; echo $TMP/kineto_bad_ts.json)
exit: 2
stderr: error: '
stderr: kineto_bad_ts.json': byte 75: event 0: field 'ts': expected a number
