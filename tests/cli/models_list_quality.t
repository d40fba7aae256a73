args: fit --db mq.db $SHARED/traces/nccl-scale/h100x8_1node_dgx_nvswitch_all_reduce_perf.txt >/dev/null && "$cvc" models --db mq.db --format csv && "$cvc" models --db mq.db --format json && "$cvc" models --db mq.db
exit: 0
stdout: id,kind,gpu,system,op,ranks,per_node,rows,r2,mape_pct,extrap_mape_pct,domain_min,domain_max,domain_unit,used,why_not,source
stdout: "r2":0.98
stdout: domain_min  domain_max
stdout: 17,179,869,184  bytes
