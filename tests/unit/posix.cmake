# POSIX layer (instrumentation/posix): the pure parts, linked directly from
# the static siox-posix-core library (no wrappers, no preload).
foreach(t path fdtable position)
  siox_unit_test(test_posix_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_posix_${t}.c
                 LIBS siox-posix-core Threads::Threads)
endforeach()
