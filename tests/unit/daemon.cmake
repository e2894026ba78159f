# siox-daemon unit tests: the record walker, clock conversion and sync, the
# spool, and the batcher, each driven directly through siox-daemon-core.
add_library(siox-daemon-testkit STATIC
  ${PROJECT_SOURCE_DIR}/siox-daemon/testkit/cw_synth.c
  ${PROJECT_SOURCE_DIR}/siox-daemon/testkit/fake_server.c)
target_include_directories(siox-daemon-testkit PUBLIC ${PROJECT_SOURCE_DIR}/siox-daemon/testkit)
target_link_libraries(siox-daemon-testkit PUBLIC siox-protocol Threads::Threads)
foreach(t walker clock spool batcher hint_cache job_id validate route frameseq)
  siox_unit_test(test_daemon_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_daemon_${t}.c
    LIBS siox-daemon-core siox-daemon-testkit)
endforeach()
