args: calibrate --plan --db plan.db
exit: 2
stderr: error: calibrate: --db does not apply with --plan (nothing is measured or fitted)
