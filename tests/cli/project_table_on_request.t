args: project --format table
exit: 0
stdout: model
stdout: comm_share (90%)
stdout: exposed_share (90%)
stderr: project: the best layout by tokens/s of each of
