args: fit --db fj.db $CASES/../data/nccl-json-h100x16-ib400-all-reduce.json >/dev/null 2>&1 && "$cvc" models show 1 --db fj.db
exit: 0
stdout: collective:    allreduce
stdout: gpu:           H100-SXM
stdout: ranks:         16 (8 per node)
stdout: domain:        1048576 .. 8589934592 bytes
stdout: source:        nccl-json-h100x16-ib400-all-reduce.json
