# Per-user visibility (label integration, issue 9 part 6): workloads of two
# Unix users through the real daemon and server; each user's `siox` and psql
# see only their own rows, root sees all. Needs root (skips otherwise).
add_executable(job_claim ${CMAKE_CURRENT_LIST_DIR}/job_claim.c)
target_link_libraries(job_claim PRIVATE siox-client)
set(SIOX_USERS_IT_ENV
  SIOX_SERVER=$<TARGET_FILE:siox-server>
  SIOX_DAEMON=$<TARGET_FILE:siox-daemon>
  SIOX_CLI=$<TARGET_FILE:siox>
  SIOX_CHAIN=$<TARGET_FILE:siox-example-chain>
  SIOX_JOB_CLAIM=$<TARGET_FILE:job_claim>)
foreach(t two_users job_owner)
  add_test(NAME integration_${t}
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/test_${t}.sh)
  set_tests_properties(integration_${t} PROPERTIES
    LABELS integration TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT "${SIOX_USERS_IT_ENV}")
endforeach()
