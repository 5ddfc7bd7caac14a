# History files (tests/reliability/history_files.py): the writer and the
# reader share one verdict, taken before any write; a damaged file is refused.
add_test(NAME reliability_history_files
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/reliability/history_files.py
    $<TARGET_FILE:history_writer> $<TARGET_FILE:gpudoctor>)
set_tests_properties(reliability_history_files PROPERTIES TIMEOUT 120)
