args: version >/dev/null && mkdir -p nodefault && cd nodefault && "$cvc" report -o r.html
exit: 2
stderr: error: report: nothing to report: no --projection, and no database ('cvc.db' does not exist here; --db PATH names one)
