# Attacks on the kernel-log readers (tests/reliability/kernlog_attacks.py):
# truncate mid-scan, copytruncate and rotation under --follow, devices and
# FIFOs as --file, `logs`/`check` peak RSS on a large log, serve's RSS after
# 1M followed Xid events (memory not judged in the ASan build).
set(GD_KERNLOG_FLAGS "")
if(GD_SANITIZE)
  set(GD_KERNLOG_FLAGS "--sanitized")
endif()
add_test(NAME reliability_kernlog
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/reliability/kernlog_attacks.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} ${GD_KERNLOG_FLAGS})
set_tests_properties(reliability_kernlog PROPERTIES TIMEOUT 240)

# The scanner's streaming fold against a plain fold, and its bounds
# (tests/reliability/kernlog_fold_test.cc, in gpudoctor_tests).
if(GD_UNIT_TESTS)
  target_sources(gpudoctor_tests PRIVATE ${CMAKE_SOURCE_DIR}/tests/reliability/kernlog_fold_test.cc)
endif()
