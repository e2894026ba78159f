# siox-server ingest benchmark (run by hand or bench/run, never by ctest):
#   bench_server $<TARGET_FILE:siox-server> [activities] [runs]
add_executable(bench_server ${CMAKE_CURRENT_LIST_DIR}/bench_server.c)
target_link_libraries(bench_server PRIVATE siox-server-harness)
add_dependencies(bench_server siox-server)
