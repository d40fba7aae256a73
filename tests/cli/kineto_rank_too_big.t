args: import --db $TMP/kineto_rank.db $(printf '{"distributedInfo": {"rank": 4294967296, "world_size": 2}, "traceEvents": []}' > $TMP/kineto_rank_big.json; echo $TMP/kineto_rank_big.json)
exit: 2
stderr: kineto_rank_big.json': byte 29: field 'rank': expected a rank 0..1073741823
