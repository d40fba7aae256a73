args: import --db $TMP/j.db $CASES/../data/nccl-json-h100x16-ib400-all-reduce.json
exit: 0
stdout: 14 events, 0 activities, 0 collectives, 0 ranges, 28 nccl-tests rows
