args: import --db one.db --run both $SHARED/traces/pipit-nsys-sqlite-perlmutter
exit: 0
stdout: imported 2 files into run 1 of 'one.db'
