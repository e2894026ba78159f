# libsiox-workload: the file format (round trip, bad input) and the
# generators (characterization counters, synthesis from them), no database.
foreach(t format generators transform)
  siox_unit_test(test_workload_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_workload_${t}.c LIBS siox-workload)
endforeach()
# The extractor on a synthetic warehouse (label integration: it starts
# siox-server and its PostgreSQL; the kb-test-db fixture of kb.cmake).
add_executable(test_workload_extract ${CMAKE_CURRENT_LIST_DIR}/test_workload_extract.c)
target_link_libraries(test_workload_extract PRIVATE PkgConfig::CMOCKA kb-test-db siox-workload m)
add_dependencies(test_workload_extract siox-server)
add_test(NAME test_workload_extract COMMAND test_workload_extract $<TARGET_FILE:siox-server>)
set_tests_properties(test_workload_extract PROPERTIES LABELS integration TIMEOUT 300)
