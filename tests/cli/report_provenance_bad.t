args: --version >/dev/null && printf 'gpu,step_s\nH100-SXM,1\n' > pb.csv && printf '{"cvc_version":"0.1.0","origins":[1]}' > pb.provenance.json && "$cvc" report --no-db --projection pb.csv -o pb.html; echo "rc=$?"; printf '{"origins":' > pb.provenance.json && "$cvc" report --no-db --projection pb.csv -o pb.html
exit: 2
stdout: rc=2
stderr: error: 'pb.provenance.json': provenance: expected element 0 of "origins" to be an object
stderr: error: 'pb.provenance.json': byte 11: expected valid JSON
