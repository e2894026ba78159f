# libsiox-client hot-path cost against the same loop without SIOX.
add_executable(bench_client bench_client.c)
target_link_libraries(bench_client PRIVATE siox-client bench-drain)
