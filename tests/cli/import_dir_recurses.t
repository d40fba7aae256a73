args: import --db d.db $SHARED/traces/nccl-scale
exit: 0
stderr: note: '
stderr: nccl-scale': 1 file that no importer reads left out (first: '
stdout: imported 21 files into run 1
