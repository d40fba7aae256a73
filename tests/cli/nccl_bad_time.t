args: import --db $TMP/bad.db $(printf '#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n  8  2  float  sum  -1  1.0  0.00  0.00  0  1.0  0.00  0.00  0\n  16  4  float  sum  -1  abc  0.00  0.00  0  1.0  0.00  0.00  0\n' > $TMP/bad.log; echo $TMP/bad.log)
exit: 2
stderr: bad.log': line 3: column 'time': expected a number
