args: import --db $TMP/b.db $(sed 's/"bus_bw":21.080000/"bus_bw":25.000000/' $CASES/../data/nccl-json-h100x16-ib400-all-reduce.json > $TMP/bad.json; echo $TMP/bad.json)
exit: 2
stderr: bad.json': result 1: field 'out_of_place.bus_bw': expected alg_bw 11.240000 x 1.8750 = 21.075000, the all_reduce bus factor of 16 ranks (-J file: 16 device entries x 1 thread x 1 GPU), got 25.000000
