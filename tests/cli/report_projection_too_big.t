args: version >/dev/null && truncate -s 300M big.csv && "$cvc" report --no-db -p big.csv -o r.html
exit: 2
stderr: 'big.csv': 300 MiB: the report reads a table of at most 256 MiB
stderr: cvc project --top K
