# siox CLI against a throwaway PostgreSQL with a synthetic warehouse, plus a
# fake daemon/server for `siox status` (label integration).
add_executable(cli_fake_status ${CMAKE_CURRENT_LIST_DIR}/cli_fake_status.c)
target_link_libraries(cli_fake_status PRIVATE siox-protocol)
add_test(NAME integration_cli_warehouse COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_warehouse.sh)
set_tests_properties(integration_cli_warehouse PROPERTIES
  LABELS integration TIMEOUT 600
  ENVIRONMENT "SIOX_CLI=$<TARGET_FILE:siox>;SIOX_FAKE_STATUS=$<TARGET_FILE:cli_fake_status>;SIOX_SCHEMA=${PROJECT_SOURCE_DIR}/warehouse/schema/001_init.sql;SIOX_ONTOLOGY_SQL=${PROJECT_BINARY_DIR}/ontology/ontology.sql")

# The kinds' latency models kept by the fold (schema 024) and read by blame,
# on a bench_blame_fill template ingested by a real siox-server (bench/ is
# added after tests/: the target is resolved at generation time).
add_test(NAME integration_blame_kind_models COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_blame_kind_models.sh)
set_tests_properties(integration_blame_kind_models PROPERTIES
  LABELS integration TIMEOUT 600
  ENVIRONMENT "SIOX_SERVER=$<TARGET_FILE:siox-server>;SIOX_CLI=$<TARGET_FILE:siox>;SIOX_BLAME_FILL=$<TARGET_FILE:bench_blame_fill>")
