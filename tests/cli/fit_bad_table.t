args: version >/dev/null; printf 'a,b\n1,2\n' > bad.csv; "$cvc" fit --db fb.db bad.csv
exit: 2
stderr: error: 'bad.csv': line 1: expected a known table header
