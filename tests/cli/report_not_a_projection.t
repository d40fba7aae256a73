args: report --no-db --projection $(printf 'a,b,c\n1,2,3\n' > $TMP/junk.csv; echo $TMP/junk.csv) -o $TMP/junk.html
exit: 2
stderr: junk.csv': expected a projection (the output of cvc project --csv or --json): no step-time column
