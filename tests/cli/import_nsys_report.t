args: import --db $TMP/rep.db $(printf 'not sqlite, a report container' > $TMP/run1.nsys-rep; echo $TMP/run1.nsys-rep)
exit: 2
stderr: run1.nsys-rep': byte 0: an Nsight Systems report, expected its SQLite export: nsys export --type=sqlite -o report.sqlite
