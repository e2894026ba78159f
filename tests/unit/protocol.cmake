# Protocol codec tests: frame header, block builders, block round trip, the
# reusable encoder (block_encoder: canonical bytes, bounded pack buffer),
# rejection of bad payloads, a deterministic mutation fuzz, and the SPMD
# compression figure (printed, never asserted).
foreach(t frame block_builders block_roundtrip block_reject block_fuzz block_size block_encoder hello_cred hostport)
  siox_unit_test(test_protocol_${t} SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_protocol_${t}.c LIBS siox-protocol)
endforeach()

# TLS through memory BIOs (protocol/tls_pipe.c), no sockets.
siox_unit_test(test_protocol_tls_pipe SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_protocol_tls_pipe.c LIBS siox-tls)
