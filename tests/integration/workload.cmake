# Workload extraction and replay end to end (label integration): a traced
# 4-rank MPI-IO job on /dev/shm, extracted, replayed under tracing, compared.
if(TARGET siox-replay AND TARGET mpi_io_workload AND TARGET siox-posix)
  add_test(NAME integration_workload_replay COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_workload_replay.sh)
  set_tests_properties(integration_workload_replay PROPERTIES
    LABELS integration TIMEOUT 600
    ENVIRONMENT "${SIOX_MPI_IT_ENV};SIOX_REPLAY=$<TARGET_FILE:siox-replay>")
endif()
