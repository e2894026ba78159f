# siox-server ingest benchmark (run by hand or bench/run, never by ctest):
#   bench_server $<TARGET_FILE:siox-server> [activities] [runs]
add_executable(bench_server ${CMAKE_CURRENT_LIST_DIR}/bench_server.c)
target_link_libraries(bench_server PRIVATE siox-server-harness)
add_dependencies(bench_server siox-server)

# Matcher benchmark (bench/run): bench_match $<TARGET_FILE:siox-server> [pairs] [runs]
add_executable(bench_match ${CMAKE_CURRENT_LIST_DIR}/bench_match.c)
target_link_libraries(bench_match PRIVATE siox-server-harness Threads::Threads)
add_dependencies(bench_match siox-server)

# What a causal_links row costs PostgreSQL, by part (by hand, not in bench/run):
#   bench_link_row $<TARGET_FILE:siox-server> [rounds]
add_executable(bench_link_row ${CMAKE_CURRENT_LIST_DIR}/bench_link_row.c)
target_link_libraries(bench_link_row PRIVATE siox-server-harness)
add_dependencies(bench_link_row siox-server)

# Hello round trip with MUNGE vs --auth none (bench/run): bench_auth $<TARGET_FILE:siox-server> [N]
add_executable(bench_auth ${CMAKE_CURRENT_LIST_DIR}/bench_auth.c)
target_link_libraries(bench_auth PRIVATE siox-server-harness)
add_dependencies(bench_auth siox-server)
# Memory under a 10 x 100k activities/s burst (bench/run burst): server and
# daemon peak RSS next to their --memory-mb bounds.
#   bench_burst $<TARGET_FILE:siox-server> $<TARGET_FILE:siox-daemon>
add_executable(bench_burst ${CMAKE_CURRENT_LIST_DIR}/bench_burst.c)
target_link_libraries(bench_burst PRIVATE siox-server-harness siox-daemon-testkit)
add_dependencies(bench_burst siox-server siox-daemon)
# The blame latency benchmark's warehouse template (bench/bench_blame_latency.sh):
#   bench_blame_fill PORT MUNGE_SOCKET JOBS WRITES_PER_RANK
add_executable(bench_blame_fill ${CMAKE_CURRENT_LIST_DIR}/bench_blame_fill.c)
target_link_libraries(bench_blame_fill PRIVATE siox-server-harness)
add_dependencies(bench_blame_fill siox-server)
# The in-memory matcher's window alone, on one core (bench/run match):
#   bench_match_window [pairs] [runs]
add_executable(bench_match_window ${CMAKE_CURRENT_LIST_DIR}/bench_match_window.c)
target_link_libraries(bench_match_window PRIVATE siox-server-core)

# Sharded ingest (bench/run shards): 3 servers with --shard K/3, N = 1, 2, 3 at once:
#   bench_shards $<TARGET_FILE:siox-server> [activities_per_shard] [rounds]
add_executable(bench_shards ${CMAKE_CURRENT_LIST_DIR}/bench_shards.c)
target_link_libraries(bench_shards PRIVATE siox-server-harness Threads::Threads)
add_dependencies(bench_shards siox-server)
