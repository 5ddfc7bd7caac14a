# The docs stand alone and their examples are what the binary prints.

# Every relative link and repository path in README.md, docs/*.md and
# deploy/**/README* names a file of the repository; none leaves it.
add_test(NAME docs_links
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/docs/links.py
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})

# Each ```console block's commands, run on files shipped in the repository,
# print exactly the text under them (tests/docs/examples.py ... --update).
add_test(NAME docs_examples
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/docs/examples.py $<TARGET_FILE:gpudoctor>
  WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(docs_examples PROPERTIES TIMEOUT 120)
