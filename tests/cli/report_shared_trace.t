args: import --db r.db $SHARED/traces/hta-nccl-args-a100-w2/nccl_data.json.gz >/dev/null && "$cvc" report --db r.db -o r.html --csv-dir csv --title 'nccl <args>' && head -1 csv/ranks.csv && "$cvc" export --db r.db --perfetto t.json && grep -c '"ph":"X"' t.json
exit: 0
stdout: wrote r.html
stdout: wrote tables to csv/
stdout: run,rank,device,kernels,comm_kernels,span_ms,busy_ms,compute_ms,comm_ms,compute_only_ms,hidden_ms,exposed_ms,copy_ms,idle_ms,overlap_pct,comm_share,exposed_share,host_wait_ms,kernel_wait_ms,other_idle_ms,unlaunched_gaps
stdout: wrote 3804 events (1 processes, 3 threads) to t.json
