args: import --db i.db $SHARED/traces/INDEX.md
exit: 2
stderr: expected an nccl-tests log: its banner
stderr: found 2 rows quoted
