args: fit --db $TMP/f.db $(sed 's/"type":"float","redop":"sum","root":"    -1","out_of_place":{"time":93.25/"type":"float" "redop":"sum","root":"    -1","out_of_place":{"time":93.25/' $CASES/../data/nccl-json-h100x16-ib400-all-reduce.json > $TMP/broken.json; echo $TMP/broken.json)
exit: 2
stderr: broken.json': byte 2504: expected JSON (object value separator ',' expected)
