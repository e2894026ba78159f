# siox CLI against a throwaway PostgreSQL with a synthetic warehouse, plus a
# fake daemon/server for `siox status` (label integration).
add_executable(cli_fake_status ${CMAKE_CURRENT_LIST_DIR}/cli_fake_status.c)
target_link_libraries(cli_fake_status PRIVATE siox-protocol)
add_test(NAME integration_cli_warehouse COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_warehouse.sh)
set_tests_properties(integration_cli_warehouse PROPERTIES
  LABELS integration TIMEOUT 600
  ENVIRONMENT "SIOX_CLI=$<TARGET_FILE:siox>;SIOX_FAKE_STATUS=$<TARGET_FILE:cli_fake_status>;SIOX_SCHEMA=${PROJECT_SOURCE_DIR}/warehouse/schema/001_init.sql;SIOX_ONTOLOGY_SQL=${PROJECT_BINARY_DIR}/ontology/ontology.sql")
