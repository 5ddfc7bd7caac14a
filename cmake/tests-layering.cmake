# The folder order of src/ (tests/layering/check.py: every #include and
# cmake/folders.cmake against one table), and the checker's own cases.
add_test(NAME layering
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/layering/check.py ${CMAKE_SOURCE_DIR}/src)
add_test(NAME layering_self_test
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/layering/self_test.py)
