# Device nodes in a real user namespace: devnodes.rootless-denied from the
# kernel's own view of unmapped owners (tests/nodes/user_namespace.py; root
# and user namespaces needed, skipped without).
add_test(NAME nodes_user_namespace
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/nodes/user_namespace.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(nodes_user_namespace PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
