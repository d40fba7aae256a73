args: fit --db ff.db $SHARED/traces/nccl-scale
exit: 2
stderr: is a folder: fit reads files (measured tables, nccl-tests logs); give them
