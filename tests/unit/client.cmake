# libsiox-client unit tests: each scenario is its own process, because the
# library's state is per process. client_fake_daemon.c decodes what is sent.
foreach(t api nodaemon threads fork disable exit detached burst resend exitloss fdthread fdtable wakeups execretry)
  if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/unit/test_client_${t}.c)
    continue()
  endif()
  siox_unit_test(test_client_${t}
    SOURCES unit/test_client_${t}.c unit/client_fake_daemon.c
    LIBS siox-client)
  target_include_directories(test_client_${t} PRIVATE ${CMAKE_SOURCE_DIR}/protocol ${CMAKE_CURRENT_SOURCE_DIR}/unit)
endforeach()

# Leaf activities (src/leaf.h) are hidden, for libsiox-posix, which links the
# client's objects in: so does this test.
siox_unit_test(test_client_leaf
  SOURCES unit/test_client_leaf.c unit/client_fake_daemon.c
  LIBS siox-client-obj)
target_include_directories(test_client_leaf PRIVATE ${CMAKE_SOURCE_DIR}/protocol ${CMAKE_SOURCE_DIR}/siox-client/src
                           ${CMAKE_CURRENT_SOURCE_DIR}/unit)
