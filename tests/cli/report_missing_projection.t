args: report --no-db --projection nope.csv -o r.html
exit: 1
stderr: error: 'nope.csv': cannot open
