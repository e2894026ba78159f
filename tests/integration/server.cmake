# siox-server integration tests: each starts its own server (embedded
# PostgreSQL in a temp dir, free loopback port) and stops it by pid.
add_library(siox-server-harness STATIC ${CMAKE_CURRENT_LIST_DIR}/server_harness.c)
target_include_directories(siox-server-harness PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(siox-server-harness PUBLIC siox-protocol siox-ontology PkgConfig::LIBPQ PkgConfig::MUNGE)

foreach(t ingest badinput restart link link_copy waiting late merge grants auth match_memory)
  add_executable(server_test_${t} ${CMAKE_CURRENT_LIST_DIR}/server_test_${t}.c)
  target_link_libraries(server_test_${t} PRIVATE siox-server-harness)
  add_dependencies(server_test_${t} siox-server)
  add_test(NAME server_${t} COMMAND server_test_${t} $<TARGET_FILE:siox-server>)
  set_tests_properties(server_${t} PROPERTIES LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()

# Memory and connection bounds under attack (issue 9 part 5): bombs, big
# unauthenticated Hellos, a Ping flood, fd exhaustion; RSS under --memory-mb.
add_executable(server_test_limits ${CMAKE_CURRENT_LIST_DIR}/server_test_limits.c)
target_link_libraries(server_test_limits PRIVATE siox-server-harness Threads::Threads)
add_dependencies(server_test_limits siox-server)
add_test(NAME server_limits COMMAND server_test_limits $<TARGET_FILE:siox-server>)
set_tests_properties(server_limits PROPERTIES LABELS integration TIMEOUT 300)
if(SIOX_SANITIZE) # RSS is the measure: keep ASan's quarantine of freed memory small
  set_tests_properties(server_limits PROPERTIES ENVIRONMENT "ASAN_OPTIONS=quarantine_size_mb=4")
endif()

# --db CONNINFO against a site PostgreSQL: server_db.sh starts a throwaway
# cluster and stops it by pid; server_test_db drives the server against it.
add_executable(server_test_db ${CMAKE_CURRENT_LIST_DIR}/server_test_db.c)
target_link_libraries(server_test_db PRIVATE siox-server-harness)
add_dependencies(server_test_db siox-server)
add_test(NAME server_db COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/server_db.sh $<TARGET_FILE:siox-server>
                                $<TARGET_FILE:server_test_db>)
set_tests_properties(server_db PROPERTIES LABELS integration TIMEOUT 300)
