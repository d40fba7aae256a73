args: import --db "$TMP/i.db" "$SHARED/traces/hta-ddp-v100-2rank/df_index_resolver.json.gz" > /dev/null && "$cvc" analyze --db "$TMP/i.db" --idle --format csv && "$cvc" analyze --db "$TMP/i.db" --idle --by step; echo "by step: $?"; "$cvc" analyze --db "$TMP/i.db" --idle --classes; echo "two tables: $?"; "$cvc" analyze --db "$TMP/i.db" --idle --kernel-wait-us -1; echo "negative: $?"
exit: 0
stdout: run,rank,device,gaps,unlaunched_gaps,idle_us,host_wait_us,kernel_wait_us,other_us
stdout: by step: 2
stdout: two tables: 2
stdout: negative: 2
stderr: --idle is by rank
stderr: --classes, --collectives and --idle print different tables
stderr: --kernel-wait-us: expected 0 to 1e9 microseconds, got -1
stdout: ,22049,0,732352.000,709288.000,22906.000,158.000
