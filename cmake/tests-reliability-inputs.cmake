# Hostile files (tests/reliability/hostile_inputs.py): every command that
# reads a user-given file, given a directory, /dev/zero, a FIFO with no
# writer, a vanished file, a 100k-part dotted key and a 2 MiB config.
add_test(NAME reliability_hostile_inputs
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/reliability/hostile_inputs.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(reliability_hostile_inputs PROPERTIES TIMEOUT 180)
