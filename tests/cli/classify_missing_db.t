args: classify --db nope.db
exit: 2
stderr: error: 'nope.db': cannot open database
