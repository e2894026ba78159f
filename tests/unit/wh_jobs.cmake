# libsiox-warehouse's job views (issue 14 section 2): the critical-file sweep
# line against brute force.
siox_unit_test(test_wh_critical_files SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_wh_critical_files.c LIBS siox-warehouse)
