# The warehouse boundary (issue 14 §1): no SQL on the core tables in the C
# sources of the components above the warehouse (no build, no database).
add_test(NAME check_core_sql COMMAND ${CMAKE_CURRENT_LIST_DIR}/../check_core_sql.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(check_core_sql PROPERTIES LABELS unit TIMEOUT 60)
