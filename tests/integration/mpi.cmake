# MPI-IO and parallel-HDF5 layers end to end (label integration): 4-rank
# programs under mpirun with LD_PRELOAD of libsiox-mpi / libsiox-hdf5 /
# libsiox-posix, a real siox-daemon and siox-server, asserts in the warehouse.
if(TARGET siox-mpi)
  add_executable(mpi_io_workload integration/mpi_io_workload.c)
  target_link_libraries(mpi_io_workload PRIVATE MPI::MPI_C)
  set(SIOX_MPI_IT_ENV
    SIOX_SERVER=$<TARGET_FILE:siox-server>
    SIOX_DAEMON=$<TARGET_FILE:siox-daemon>
    SIOX_CLI=$<TARGET_FILE:siox>
    SIOX_MPI_LIB=$<TARGET_FILE:siox-mpi>
    SIOX_MPI_WORKLOAD=$<TARGET_FILE:mpi_io_workload>)
  if(TARGET siox-posix)
    list(APPEND SIOX_MPI_IT_ENV SIOX_POSIX_LIB=$<TARGET_FILE:siox-posix>)
  endif()
  set(SIOX_MPI_TESTS mpi_io)
  if(TARGET siox-hdf5)
    add_executable(hdf5_parallel_write integration/hdf5_parallel_write.c)
    target_include_directories(hdf5_parallel_write PRIVATE ${HDF5_MPI_INCLUDE_DIRS})
    target_link_libraries(hdf5_parallel_write PRIVATE PkgConfig::HDF5_MPI MPI::MPI_C)
    list(APPEND SIOX_MPI_IT_ENV
      SIOX_HDF5_LIB=$<TARGET_FILE:siox-hdf5>
      SIOX_HDF5_WRITER=$<TARGET_FILE:hdf5_parallel_write>)
    list(APPEND SIOX_MPI_TESTS mpi_hdf5)
  endif()
  foreach(t ${SIOX_MPI_TESTS})
    add_test(NAME integration_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_${t}.sh)
    set_tests_properties(integration_${t} PROPERTIES
      LABELS integration TIMEOUT 300 ENVIRONMENT "${SIOX_MPI_IT_ENV}")
  endforeach()
  # siox-strided-writes --segmented: each rank's pwrites in its own segment (strace).
  if(TARGET siox-strided-writes)
    add_test(NAME integration_strided_segmented COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_strided_segmented.sh)
    set_tests_properties(integration_strided_segmented PROPERTIES LABELS integration TIMEOUT 120 SKIP_RETURN_CODE 77
      ENVIRONMENT "SIOX_STRIDED=$<TARGET_FILE:siox-strided-writes>")
  endif()
  # The same MPI-IO checks under OpenMPI's default component.
  add_test(NAME integration_mpi_io_ompio COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_mpi_io.sh)
  set_tests_properties(integration_mpi_io_ompio PROPERTIES
    LABELS integration TIMEOUT 300 ENVIRONMENT "${SIOX_MPI_IT_ENV};SIOX_MPI_IO_COMPONENT=ompio")
endif()
