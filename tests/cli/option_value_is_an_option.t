args: import --db --run x.json; rc=$?; test -e ./--run && echo "made --run"; exit $rc
exit: 2
stderr: error: import: --db needs a value, got the option '--run'
