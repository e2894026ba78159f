# siox-server unit tests: the pure parts (siox-server-core).
foreach(t uf link match_window copybuf options)
  siox_unit_test(test_server_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_server_${t}.c LIBS siox-server-core)
endforeach()
