# explain against real error text from public threads (tests/cases/): top-1
# and top-3 accuracy per cause class must stay above the floor in eval.py,
# with no crash and no new false alarm.
add_test(NAME explain_cases
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/cases/eval.py $<TARGET_FILE:gpudoctor>
    --check)
set_tests_properties(explain_cases PROPERTIES TIMEOUT 600)
