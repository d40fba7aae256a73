args: import --db idle.db "$SHARED/traces/hta-ddp-v100-2rank/df_index_resolver.json.gz" >/dev/null && "$cvc" report --db idle.db -o idle.html --csv-dir idlecsv && cat idlecsv/ranks.csv
exit: 0
stdout: ,idle_ms,overlap_pct,comm_share,exposed_share,host_wait_ms,kernel_wait_ms,other_idle_ms,unlaunched_gaps
stdout: ,732.352,0,0.20620324126569203,0.20620324126569203,709.288,22.906,0.158,0
