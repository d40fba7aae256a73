args: export --perfetto t.json --db nope.db
exit: 2
stderr: error: 'nope.db': cannot open
