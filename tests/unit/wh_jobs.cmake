# libsiox-warehouse's job views (issue 14 section 2): the critical-file sweep
# line against brute force.
siox_unit_test(test_wh_critical_files SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_wh_critical_files.c LIBS siox-warehouse)
# Failed queries reported one way (wh_pg.h): a real siox-server's warehouse
# read through a role that may read nothing (label integration: it starts
# PostgreSQL; the kb-test-db fixture of kb.cmake).
add_executable(test_wh_errors ${CMAKE_CURRENT_LIST_DIR}/test_wh_errors.c)
target_link_libraries(test_wh_errors PRIVATE PkgConfig::CMOCKA kb-test-db siox-warehouse siox-workload)
add_dependencies(test_wh_errors siox-server)
add_test(NAME test_wh_errors COMMAND test_wh_errors $<TARGET_FILE:siox-server>)
set_tests_properties(test_wh_errors PROPERTIES LABELS integration TIMEOUT 300)
# The jobs `siox web` computes ahead of their first view
# (siox_wh_job_unviewed): job_aggregates rows written by SQL into a real
# siox-server's warehouse (label integration: it starts PostgreSQL).
add_executable(test_wh_job_unviewed ${CMAKE_CURRENT_LIST_DIR}/test_wh_job_unviewed.c)
target_link_libraries(test_wh_job_unviewed PRIVATE PkgConfig::CMOCKA kb-test-db siox-warehouse)
add_dependencies(test_wh_job_unviewed siox-server)
add_test(NAME test_wh_job_unviewed COMMAND test_wh_job_unviewed $<TARGET_FILE:siox-server>)
set_tests_properties(test_wh_job_unviewed PROPERTIES LABELS integration TIMEOUT 300)
