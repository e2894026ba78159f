# Job views (issue 14 sections 2 and 3) on a warehouse filled by a real MPI
# run: `siox jobs`, `siox summary`, `siox web` (label integration).
if(TARGET siox-mpi AND TARGET siox-posix)
  add_test(NAME integration_job_views COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_job_views.sh)
  set_tests_properties(integration_job_views PROPERTIES
    LABELS integration TIMEOUT 300 ENVIRONMENT "${SIOX_MPI_IT_ENV}")
endif()
# The job's stored aggregates: served only while they hold, per job.
if(TARGET siox-mpi AND TARGET siox-posix)
  add_test(NAME integration_job_aggregates COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_job_aggregates.sh)
  set_tests_properties(integration_job_aggregates PROPERTIES
    LABELS integration TIMEOUT 300 ENVIRONMENT "${SIOX_MPI_IT_ENV}")
endif()
# `siox jobs`'s stored per-job sums: read while they hold, per job.
if(TARGET siox-mpi AND TARGET siox-posix)
  add_test(NAME integration_jobs_aggregates COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_jobs_aggregates.sh)
  set_tests_properties(integration_jobs_aggregates PROPERTIES
    LABELS integration TIMEOUT 300 ENVIRONMENT "${SIOX_MPI_IT_ENV}")
endif()
# `siox web`: the JSON API against the CLI, and the pages in headless Chromium
# (screenshots in build/test-artifacts/web).
if(TARGET siox-mpi AND TARGET siox-posix)
  add_test(NAME integration_web COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_web.sh)
  set_tests_properties(integration_web PROPERTIES
    LABELS integration TIMEOUT 1500
    ENVIRONMENT "${SIOX_MPI_IT_ENV};SIOX_CHAIN=$<TARGET_FILE:siox-example-chain>;SIOX_ARTIFACTS=${CMAKE_BINARY_DIR}/test-artifacts/web")
endif()
