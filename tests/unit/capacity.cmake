# libsiox-capacity (no database): DHT placement against GlusterFS's hash,
# the fit, the event core (M/D/1), the simulation and the scenarios.
siox_unit_test(test_capacity_model SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_model.c LIBS siox-capacity m)
target_include_directories(test_capacity_model PRIVATE ${PROJECT_SOURCE_DIR}/capacity)
# The client node's page cache in the simulation.
siox_unit_test(test_capacity_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_cache.c LIBS siox-capacity m)
# The fit with disturbed samples left out.
siox_unit_test(test_capacity_robust SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_capacity_robust.c LIBS siox-capacity m)
