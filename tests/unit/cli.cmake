# siox-cli unit tests: graph.c and blame.c on synthetic in-memory trees.
foreach(t graph_exclusive graph_critical_path blame_culprit blame_normal blame_per_byte blame_deep
          waiting blame_class blame_job blame_collective blame_unlinked blame_connection)
  siox_unit_test(test_cli_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cli_${t}.c LIBS siox-warehouse m)
endforeach()
