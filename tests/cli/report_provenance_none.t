args: --version >/dev/null && printf 'gpu,gpus,step_s,tokens_per_s\nH100-SXM,8,1.5,1000\n' > old.csv && "$cvc" report --no-db --projection old.csv -o pn.html --csv-dir pn && cat pn/provenance.csv && test ! -e pn/model_origins.csv && echo no-origins
exit: 0
stdout: wrote pn.html
stdout: projection,old.csv
stdout: provenance,"none recorded: the projection carries no record of the database, models and cvc version that priced it
stdout: no-origins
