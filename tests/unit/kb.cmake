# Knowledge-base tests. The aggregate tests (label integration: they start
# PostgreSQL) run against a real siox-server's warehouse (embedded PostgreSQL, all migrations) filled with
# synthetic rows by SQL; the server binary is their argument.
add_library(kb-test-db STATIC ${CMAKE_CURRENT_LIST_DIR}/test_kb_baseline_db.c)
target_link_libraries(kb-test-db PUBLIC siox-server-harness siox-kb PkgConfig::CMOCKA)
foreach(t baselines capacity)
  add_executable(test_kb_${t} ${CMAKE_CURRENT_LIST_DIR}/test_kb_${t}.c)
  target_link_libraries(test_kb_${t} PRIVATE PkgConfig::CMOCKA kb-test-db m)
  add_dependencies(test_kb_${t} siox-server)
  add_test(NAME test_kb_${t} COMMAND test_kb_${t} $<TARGET_FILE:siox-server>)
  set_tests_properties(test_kb_${t} PROPERTIES LABELS integration TIMEOUT 300)
endforeach()
# The window arguments of `siox capacity` / `siox anomalies` / siox web's
# /api/component (warehouse/src/time_arg.c; no database).
siox_unit_test(test_kb_capacity_time_arg SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kb_capacity_time_arg.c
               LIBS siox-warehouse)
# The job analyses (findings, MPI-IO hint sets) on synthetic jobs inserted by
# SQL, plus their pure cost/window arithmetic (knowledge-base/src/findings.h).
add_executable(test_kb_findings ${CMAKE_CURRENT_LIST_DIR}/test_kb_findings.c)
target_include_directories(test_kb_findings PRIVATE ${PROJECT_SOURCE_DIR}/knowledge-base/src)
target_link_libraries(test_kb_findings PRIVATE PkgConfig::CMOCKA kb-test-db m)
add_dependencies(test_kb_findings siox-server)
add_test(NAME test_kb_findings COMMAND test_kb_findings $<TARGET_FILE:siox-server>)
set_tests_properties(test_kb_findings PROPERTIES LABELS integration TIMEOUT 300)
# The outcome rule of an applied hint set (pure: synthetic runs, no database).
siox_unit_test(test_kb_outcome_rule SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kb_outcome_rule.c LIBS siox-kb m)
target_include_directories(test_kb_outcome_rule PRIVATE ${PROJECT_SOURCE_DIR}/knowledge-base/src)
# Applied hint sets judged, withdrawn and restored (issue 11) on synthetic
# runs inserted by SQL into a real siox-server's warehouse.
add_executable(test_kb_hint_outcome ${CMAKE_CURRENT_LIST_DIR}/test_kb_hint_outcome.c)
target_link_libraries(test_kb_hint_outcome PRIVATE PkgConfig::CMOCKA kb-test-db m)
add_dependencies(test_kb_hint_outcome siox-server)
add_test(NAME test_kb_hint_outcome COMMAND test_kb_hint_outcome $<TARGET_FILE:siox-server>)
set_tests_properties(test_kb_hint_outcome PROPERTIES LABELS integration TIMEOUT 300)
# ROMIO's aggregation as observed: concurrency and whether it helped (pure).
siox_unit_test(test_kb_romio_agg SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kb_romio_agg.c LIBS siox-kb m)
target_include_directories(test_kb_romio_agg PRIVATE ${PROJECT_SOURCE_DIR}/knowledge-base/src)
# blame's window reads (siox_wh_exec_window, issue 10 blame latency): one
# round trip each, plain index scans off for the statement only, a failed
# statement returned with the connection left usable; on the same fixture.
add_executable(test_wh_window_scan ${CMAKE_CURRENT_LIST_DIR}/test_wh_window_scan.c)
target_link_libraries(test_wh_window_scan PRIVATE PkgConfig::CMOCKA kb-test-db siox-warehouse)
add_dependencies(test_wh_window_scan siox-server)
add_test(NAME test_wh_window_scan COMMAND test_wh_window_scan $<TARGET_FILE:siox-server>)
set_tests_properties(test_wh_window_scan PROPERTIES LABELS integration TIMEOUT 300)
# blame's peer samples (siox_wh_peers, issue 10 blame latency) read ring by
# ring around the suspect: the same samples in the same order as one read
# of the whole window; on the same fixture.
add_executable(test_wh_peers ${CMAKE_CURRENT_LIST_DIR}/test_wh_peers.c)
target_link_libraries(test_wh_peers PRIVATE PkgConfig::CMOCKA kb-test-db siox-warehouse)
add_dependencies(test_wh_peers siox-server)
add_test(NAME test_wh_peers COMMAND test_wh_peers $<TARGET_FILE:siox-server>)
set_tests_properties(test_wh_peers PROPERTIES LABELS integration TIMEOUT 300)
