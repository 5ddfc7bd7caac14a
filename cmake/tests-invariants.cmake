# Properties every fixture must keep (tests/invariants/run.py, one module per
# invariant: tests/invariants/inv_*.py) over every fake scenario, recorded
# root, snapshot and real record the tests have. Not in sanitized builds: the
# properties are the same in both builds, and its ~1,000 runs of the binary
# take over 5 minutes there (the e2e goldens run the same paths under ASan).
if(NOT GD_SANITIZE)
  add_test(NAME invariants
    COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/invariants/run.py
      $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR})
  set_tests_properties(invariants PROPERTIES TIMEOUT 300)
endif()
