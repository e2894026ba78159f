# libsiox-posix: ns added to a 64 B pwrite on tmpfs by the preload, against
# the same call without it (run: bench_posix <path-to-libsiox-posix.so>).
add_executable(bench_posix bench_posix.c)
target_link_libraries(bench_posix PRIVATE bench-drain ${CMAKE_DL_LIBS})
