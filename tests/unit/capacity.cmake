# libsiox-capacity (no database): DHT placement against GlusterFS's hash,
# the fit, the event core (M/D/1), the simulation and the scenarios.
siox_unit_test(test_capacity_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_model.c LIBS siox-capacity m)
target_include_directories(test_capacity_model PRIVATE ${PROJECT_SOURCE_DIR}/capacity)
# The client node's page cache in the simulation.
siox_unit_test(test_capacity_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_cache.c LIBS siox-capacity m)
# ROMIO's data sieving under strided views in the simulation.
siox_unit_test(test_capacity_sieve SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_sieve.c LIBS siox-capacity m)
# The fit with disturbed samples left out.
siox_unit_test(test_capacity_robust SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_robust.c LIBS siox-capacity m)
siox_unit_test(test_capacity_queued SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_queued.c LIBS siox-capacity m)
siox_unit_test(test_capacity_readkernel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_readkernel.c LIBS siox-capacity m)
siox_unit_test(test_capacity_healthy SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_healthy.c LIBS siox-capacity m)
# What is calibrated per client class (concurrency per file) and per collective MPI-IO open and close.
siox_unit_test(test_capacity_concurrency SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_concurrency.c LIBS siox-capacity m)
# The client node's kernel part (time of the volume's POSIX calls with no GlusterFS request in progress).
siox_unit_test(test_capacity_kernel SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_kernel.c LIBS siox-capacity m)
# The measured side of validate over repeated runs (median of the repeats' means per copy).
siox_unit_test(test_capacity_measured SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_measured.c LIBS siox-capacity m)
# A client's servers bounded by its node's cores (--client-cores).
siox_unit_test(test_capacity_cores SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_cores.c LIBS siox-capacity m)
siox_unit_test(test_capacity_nodecpu SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_nodecpu.c LIBS siox-capacity m)
# Ranks waiting in MPI poll on the client node's cores (processor sharing with the I/O path's CPU work).
siox_unit_test(test_capacity_polling SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_polling.c LIBS siox-capacity m)
