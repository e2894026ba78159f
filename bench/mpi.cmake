# MPI-IO layer: ns added per MPI_File_write_at (4 KiB) and the IOR-like
# slowdown (64 KiB) with libsiox-mpi + libsiox-posix preloaded, 4 ranks on
# tmpfs (run: bench_mpiio <libsiox-mpi.so> <libsiox-posix.so>, or the
# bench_mpiio_run target, which passes the built libraries).
if(TARGET siox-mpi AND TARGET siox-posix)
  add_executable(bench_mpiio bench_mpiio.c)
  target_link_libraries(bench_mpiio PRIVATE MPI::MPI_C bench-drain ${CMAKE_DL_LIBS})
  add_custom_target(bench_mpiio_run
    COMMAND bench_mpiio $<TARGET_FILE:siox-mpi> $<TARGET_FILE:siox-posix>
    DEPENDS bench_mpiio siox-mpi siox-posix USES_TERMINAL)
endif()
