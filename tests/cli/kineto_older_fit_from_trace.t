args: import --db $TMP/older.db $SHARED/traces/hta-trace-diff-a100-w8/control.json.gz
exit: 0
stdout: 9450 activities, 0 collectives, 288 ranges, 0 nccl-tests rows, 9636 ops with shapes (7374 kernel launches inside them)
