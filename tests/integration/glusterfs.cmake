# GlusterFS translators (instrumentation/glusterfs): only where they build.
# The integration test mounts a real GlusterFS (root, /dev/fuse); it exits
# 77 (reported as skipped) when it cannot.
if(TARGET siox-xlator-client AND TARGET siox-xlator-brick)
  add_test(NAME integration_glusterfs_writes
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_glusterfs_writes.sh)
  set_tests_properties(integration_glusterfs_writes PROPERTIES
    LABELS "integration;system" TIMEOUT 300 SKIP_RETURN_CODE 77 RUN_SERIAL TRUE
    ENVIRONMENT "SIOX_SERVER=$<TARGET_FILE:siox-server>;SIOX_DAEMON=$<TARGET_FILE:siox-daemon>;SIOX_CLI=$<TARGET_FILE:siox>;SIOX_TESTBED=${CMAKE_SOURCE_DIR}/testbed/siox-testbed;SIOX_XLATOR_DIR=${SIOX_XLATOR_DIR}")

  # The reporting logic against a recording stub of the client API.
  siox_unit_test(test_glusterfs_report
    SOURCES ${CMAKE_SOURCE_DIR}/instrumentation/glusterfs/tests/test_glusterfs_report.c
            $<TARGET_OBJECTS:siox-glusterfs-report>
    LIBS siox-ontology)
  target_include_directories(test_glusterfs_report PRIVATE
    ${CMAKE_SOURCE_DIR}/instrumentation/glusterfs ${CMAKE_SOURCE_DIR}/siox-client/include)
endif()
