# Overhead as users measure it: a plain C program (bench_pwrite) timed whole,
# bare and under the libsiox-posix preload with the real daemon
# (run: bench/bench_user.sh BUILD_DIR, which starts the stack).
add_executable(bench_pwrite bench_pwrite.c)
add_executable(bench_user bench_user.c)
target_link_libraries(bench_user PRIVATE m)
# Instructions per call under valgrind (bench_instr.sh), with the drain as daemon.
add_executable(bench_drain_serve bench_drain_serve.c)
target_link_libraries(bench_drain_serve PRIVATE bench-drain)
