args: fit --db fm.db no-such-table.csv.gz
exit: 2
stderr: error: 'no-such-table.csv.gz':
