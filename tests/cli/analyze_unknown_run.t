args: import --db an_run.db --run real $SHARED/traces/param-dlrm-8xv100/worker0_step_12.1694128201545.pt.trace.json.gz >/dev/null && "$cvc" analyze --db an_run.db --run nope
exit: 2
stderr: error: 'an_run.db': no run named 'nope'
