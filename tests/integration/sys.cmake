# System tests (labels integration and system): the whole stack on a real GlusterFS
# testbed with the 4-rank HDF5 / MPI-IO / POSIX workload under `siox run`.
# They mount FUSE: without root or /dev/fuse they exit 77 (skipped).

# `siox run` against a fake daemon and a fake mpirun (no root needed).
add_test(NAME integration_cli_run COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_cli_run.sh)
set_tests_properties(integration_cli_run PROPERTIES
  LABELS integration TIMEOUT 120 ENVIRONMENT "SIOX_CLI=$<TARGET_FILE:siox>")

if(TARGET siox-io-workload AND TARGET siox-xlator-client AND TARGET siox-mpi AND TARGET siox-hdf5
   AND TARGET siox-posix)
  set(SIOX_SYS_ENV
    SIOX_SERVER=$<TARGET_FILE:siox-server>
    SIOX_DAEMON=$<TARGET_FILE:siox-daemon>
    SIOX_CLI=$<TARGET_FILE:siox>
    SIOX_WORKLOAD=$<TARGET_FILE:siox-io-workload>
    SIOX_STRIDED=$<TARGET_FILE:siox-strided-writes>
    SIOX_TESTBED=${CMAKE_SOURCE_DIR}/testbed/siox-testbed
    SIOX_XLATOR_DIR=${SIOX_XLATOR_DIR})
  foreach(t sys_blame sys_tree sys_blame_waiting sys_blame_metadata sys_capacity sys_capacity_validate sys_web)
    add_test(NAME integration_${t} COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_${t}.sh)
    set_tests_properties(integration_${t} PROPERTIES
      LABELS "integration;system" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE ENVIRONMENT "${SIOX_SYS_ENV}")
  endforeach()
  # Blame across hosts whose clocks disagree: server and two daemons (+-50 ms,
  # client and bricks on different ones) in network namespaces (issue 15, 3).
  add_test(NAME integration_sys_clock_blame COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_sys_clock_blame.sh)
  set_tests_properties(integration_sys_clock_blame PROPERTIES
    LABELS "integration;system" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE ENVIRONMENT "${SIOX_SYS_ENV}")
  # Blame through the coordinator of 3 shards, the GlusterFS client's records
  # on one shard and the bricks' on another (issue 15 §2, shard_site.sh).
  add_test(NAME integration_sys_shard_blame COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_sys_shard_blame.sh)
  set_tests_properties(integration_sys_shard_blame PROPERTIES
    LABELS "integration;system" TIMEOUT 600 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE ENVIRONMENT "${SIOX_SYS_ENV}")
  # The job, its model and predictions, then its replay into the volume:
  # 6 min on an idle machine, over 10 at load 20.
  set_tests_properties(integration_sys_capacity PROPERTIES TIMEOUT 1500)
  # Two recorded jobs and two traced replays, then validate (capacity_validate_lib.sh).
  set_tests_properties(integration_sys_capacity_validate PROPERTIES TIMEOUT 1500)
  # Blame through collective MPI-IO and HDF5 (scenarios (c) and (d)).
  if(TARGET hdf5_parallel_write)
    add_test(NAME integration_sys_blame_collective
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_sys_blame_collective.sh)
    set_tests_properties(integration_sys_blame_collective PROPERTIES
      LABELS "integration;system" TIMEOUT 900 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
      ENVIRONMENT "${SIOX_SYS_ENV};SIOX_HDF5_WRITER=$<TARGET_FILE:hdf5_parallel_write>")
  endif()
endif()

# The install layout and the installed siox run (cmake --install of this build).
add_test(NAME integration_install COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_install.sh)
set_tests_properties(integration_install PROPERTIES
  LABELS integration TIMEOUT 300
  ENVIRONMENT "SIOX_CLI=$<TARGET_FILE:siox>;SIOX_SERVER=$<TARGET_FILE:siox-server>;SIOX_DAEMON=$<TARGET_FILE:siox-daemon>")
