args: import --db $TMP/kineto_world.db $(printf '{"distributedInfo": {"rank": 0, "world_size": 99999999999}, "traceEvents": []}' > $TMP/kineto_world_big.json; echo $TMP/kineto_world_big.json)
exit: 2
stderr: kineto_world_big.json': byte 46: field 'world_size': expected a size 0..1073741823
