# libsiox-workload: the file format (round trip, bad input) and the
# generators (characterization counters, synthesis from them), no database.
foreach(t format generators)
  siox_unit_test(test_workload_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_workload_${t}.c LIBS siox-workload)
endforeach()
