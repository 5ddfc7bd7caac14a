# One interface: every command's flags and JSON keys, the man pages and the
# shell completion generated from the command tree (tests/cli/interface_test.py).
add_test(NAME cli_interface
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/cli/interface_test.py
    $<TARGET_FILE:gpudoctor>)
