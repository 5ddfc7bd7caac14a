# Loose inputs (tests/reliability/loose_inputs.py): non-finite numbers,
# terminal escapes in logs and pasted text, credentials in the environment.
add_test(NAME reliability_loose_inputs
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/reliability/loose_inputs.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(reliability_loose_inputs PROPERTIES TIMEOUT 120)
