args: report --no-db --projection nope.csv -o r.html
exit: 2
stderr: error: 'nope.csv': cannot open
