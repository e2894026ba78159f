# POSIX layer end to end (label integration): a workload under
# LD_PRELOAD=libsiox-posix.so -> real siox-daemon -> siox-server -> warehouse.
# The workload is built without builtins so that gcc keeps each stdio call
# as written (it would turn some fprintf/fputs into fwrite).
add_executable(test_posix_workload ${CMAKE_CURRENT_LIST_DIR}/test_posix_workload.c)
target_compile_options(test_posix_workload PRIVATE -fno-builtin)
target_link_libraries(test_posix_workload PRIVATE Threads::Threads)
target_include_directories(test_posix_workload PRIVATE ${CMAKE_SOURCE_DIR}/instrumentation/posix)
add_test(NAME integration_posix_trace
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_posix_trace.sh)
set(SIOX_POSIX_IT_ENV
  SIOX_SERVER=$<TARGET_FILE:siox-server>
  SIOX_DAEMON=$<TARGET_FILE:siox-daemon>
  SIOX_CLI=$<TARGET_FILE:siox>
  SIOX_POSIX_LIB=$<TARGET_FILE:siox-posix>
  SIOX_POSIX_WORKLOAD=$<TARGET_FILE:test_posix_workload>
  SIOX_SANITIZE=$<IF:$<BOOL:${SIOX_SANITIZE}>,1,0>
  CC=${CMAKE_C_COMPILER})
# Exit code 77: skipped (see the script: the ASan build).
set_tests_properties(integration_posix_trace PROPERTIES
  LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT "${SIOX_POSIX_IT_ENV}")

# A launcher's child closing every descriptor before exec (issue 10, round b).
add_executable(posix_closeall ${CMAKE_CURRENT_LIST_DIR}/posix_closeall.c)
add_test(NAME integration_posix_closeall
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_posix_closeall.sh)
set_tests_properties(integration_posix_closeall PROPERTIES
  LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77
  ENVIRONMENT "${SIOX_POSIX_IT_ENV};SIOX_POSIX_CLOSEALL=$<TARGET_FILE:posix_closeall>")

# The flusher's own descriptor table: a preloaded shell's closed pipe ends.
add_test(NAME integration_posix_pipe_eof
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_posix_pipe_eof.sh)
set_tests_properties(integration_posix_pipe_eof PROPERTIES
  LABELS integration TIMEOUT 120 SKIP_RETURN_CODE 77 ENVIRONMENT "${SIOX_POSIX_IT_ENV}")

# A preloaded pread/pwrite loop stays cancellable (the wrappers keep glibc's cancellation points).
add_executable(posix_cancel ${CMAKE_CURRENT_LIST_DIR}/posix_cancel.c)
target_link_libraries(posix_cancel PRIVATE Threads::Threads)
add_test(NAME integration_posix_cancel
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_posix_cancel.sh)
set_tests_properties(integration_posix_cancel PROPERTIES
  LABELS integration TIMEOUT 120 SKIP_RETURN_CODE 77
  ENVIRONMENT "${SIOX_POSIX_IT_ENV};SIOX_POSIX_CANCEL=$<TARGET_FILE:posix_cancel>")
