cvc_embed(${CMAKE_SOURCE_DIR}/analysis/rules/default.rules cvc_default_rules)
cvc_embed(${CMAKE_SOURCE_DIR}/models/hw/catalog.csv cvc_hw_catalog_csv)

cvc_embed(/usr/share/javascript/chart.js/chart.min.js cvc_chartjs)
cvc_embed(${CMAKE_SOURCE_DIR}/reports/report.js cvc_rep_js)
cvc_embed(${CMAKE_SOURCE_DIR}/reports/report.css cvc_rep_css)
cvc_embed(${CMAKE_SOURCE_DIR}/projector/studies/default.yaml cvc_proj_default_yaml)
cvc_embed(${CMAKE_SOURCE_DIR}/projector/archs.yaml cvc_proj_archs_yaml)
