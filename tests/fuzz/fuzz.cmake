# libFuzzer targets (SIOX_FUZZ=ON, clang; see tests/fuzz/README.md). Each
# runs as a ctest test (label fuzz) for SIOX_FUZZ_SECONDS (default 60) from
# the seed corpus in tests/fuzz/corpus/<target>/. `cmake --build B --target
# siox-fuzz` builds just these and the corpus generator.
add_custom_target(siox-fuzz)
function(siox_fuzz_target name)
  cmake_parse_arguments(T "" "" "LIBS" ${ARGN})
  add_executable(${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.c)
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(${name} PRIVATE ${T_LIBS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  add_dependencies(siox-fuzz ${name})
  add_test(NAME ${name}
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/run_fuzz.sh $<TARGET_FILE:${name}>
      ${CMAKE_CURRENT_LIST_DIR}/corpus/${name} ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/${name})
  set_tests_properties(${name} PROPERTIES LABELS fuzz)
endfunction()

siox_fuzz_target(fuzz_server_decode LIBS siox-protocol)
siox_fuzz_target(fuzz_client_records LIBS siox-daemon-core)
siox_fuzz_target(fuzz_block_roundtrip LIBS siox-protocol)

# The seed corpus generator (run by hand; its output is committed).
add_executable(fuzz_gen_corpus ${CMAKE_CURRENT_LIST_DIR}/gen_corpus.c)
target_include_directories(fuzz_gen_corpus PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../unit)
target_link_libraries(fuzz_gen_corpus PRIVATE siox-daemon-core siox-daemon-testkit PkgConfig::CMOCKA)
add_dependencies(siox-fuzz fuzz_gen_corpus)
add_test(NAME fuzz_corpus_current
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/check_corpus.sh $<TARGET_FILE:fuzz_gen_corpus>
    ${CMAKE_CURRENT_LIST_DIR}/corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/corpus-check)
set_tests_properties(fuzz_corpus_current PROPERTIES LABELS fuzz)
