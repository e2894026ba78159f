# bench_daemon: siox-daemon activities/s and wire bytes/activity against a
# sink server, N synthetic SPMD ranks. Run: bench_daemon [daemon] [runs].
add_executable(bench_daemon ${CMAKE_CURRENT_LIST_DIR}/bench_daemon.c)
target_link_libraries(bench_daemon PRIVATE siox-daemon-testkit)
add_dependencies(bench_daemon siox-daemon)
