args: import --db $TMP/c.db $(head -c 3100 $CASES/../data/nccl-json-h100x16-ib400-all-reduce.json > $TMP/cut.json; echo $TMP/cut.json)
exit: 0
stdout: 2 events, 0 activities, 0 collectives, 0 ranges, 4 nccl-tests rows
stderr: cut.json': the -J file ends at byte 3100 inside its results (no closing brace): the run may have stopped before the end of its sweep; 2 whole results read
