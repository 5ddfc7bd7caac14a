# The history store (src/history/) beyond its unit tests
# (tests/unit/history_test.cc):
#
# - history_writer (tests/history/history_writer.cc): the real store driven
#   by a script, not by `gpudoctor serve`: a loop that commits and says so
#   after each commit, and a fixed story for the golden test.
# - history_kill9: the writer killed with SIGKILL at random moments, about
#   20 times; after each kill PRAGMA integrity_check is ok, `gpudoctor
#   history` reads the file, and every acknowledged commit is there.
# - history_golden: `gpudoctor history` text and JSON over the story
#   (tests/history/golden_test.py ... --update refreshes tests/history/golden/).
add_executable(history_writer tests/history/history_writer.cc)
target_link_libraries(history_writer PRIVATE gpudoctor_core)

add_test(NAME history_kill9
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/history/kill9_test.py
    $<TARGET_FILE:history_writer> $<TARGET_FILE:gpudoctor>)
set_tests_properties(history_kill9 PROPERTIES TIMEOUT 300)

add_test(NAME history_golden
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/history/golden_test.py
    $<TARGET_FILE:history_writer> $<TARGET_FILE:gpudoctor>)
set_tests_properties(history_golden PROPERTIES TIMEOUT 120)
