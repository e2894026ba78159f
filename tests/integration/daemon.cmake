# siox-daemon integration: the real binary against a fake server (withheld
# acks, dropped connection, kill -9 and restart; exactly-once, in order).
add_executable(test_daemon_replay ${CMAKE_CURRENT_LIST_DIR}/test_daemon_replay.c)
target_link_libraries(test_daemon_replay PRIVATE siox-daemon-testkit)
add_test(NAME test_daemon_replay COMMAND test_daemon_replay $<TARGET_FILE:siox-daemon>)
set_tests_properties(test_daemon_replay PROPERTIES LABELS integration TIMEOUT 120)
# Poison records and a quarantined batch through the real daemon and server
# (issue 9): each bad record is dropped alone, a rejected batch is skipped
# with its loss recorded, everything else is stored.
add_executable(test_ingest_poison ${CMAKE_CURRENT_LIST_DIR}/test_ingest_poison.c)
target_link_libraries(test_ingest_poison PRIVATE siox-daemon-testkit siox-server-harness siox-daemon-core)
add_dependencies(test_ingest_poison siox-server siox-daemon)
add_test(NAME test_ingest_poison COMMAND test_ingest_poison $<TARGET_FILE:siox-server> $<TARGET_FILE:siox-daemon>)
set_tests_properties(test_ingest_poison PROPERTIES LABELS integration TIMEOUT 180)

# Client buffer bound (--memory-mb): 32 clients with 15 MiB unfinished frames;
# the daemon's peak RSS stays under the bound and a good client keeps storing.
add_executable(test_daemon_limits ${CMAKE_CURRENT_LIST_DIR}/test_daemon_limits.c)
target_link_libraries(test_daemon_limits PRIVATE siox-daemon-testkit)
add_test(NAME test_daemon_limits COMMAND test_daemon_limits $<TARGET_FILE:siox-daemon>)
set_tests_properties(test_daemon_limits PROPERTIES LABELS integration TIMEOUT 120)
if(SIOX_SANITIZE) # RSS is the measure: keep ASan's quarantine of freed memory small
  set_tests_properties(test_daemon_limits PROPERTIES ENVIRONMENT "ASAN_OPTIONS=quarantine_size_mb=4")
endif()
