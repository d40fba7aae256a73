args: project --top 5 --by tokens --csv t.csv; rc=$?; test -e t.csv && echo "wrote t.csv" || echo "no t.csv"; exit $rc
exit: 2
stderr: error: project: --by train_tokens: every group holds one value of it, so it ranks nothing
stdout: no t.csv
