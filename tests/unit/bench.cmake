# The benches' statistics (bench/median_ci.h): the interval printed beside
# every figure of the interleaved-round benches.
siox_unit_test(test_median_ci SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_median_ci.c)
target_include_directories(test_median_ci PRIVATE ${PROJECT_SOURCE_DIR}/bench)
