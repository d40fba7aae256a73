args: report --db nope.db -o r.html
exit: 2
stderr: error: 'nope.db': cannot open
