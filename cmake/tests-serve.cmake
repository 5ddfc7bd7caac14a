# `gpudoctor serve` end to end (tests/serve/serve_test.py): the real daemon on
# loopback, live on a fake 8-GPU machine and from a snapshot: endpoints, a
# hung sampler, the Xid follower, SIGTERM, usage errors, and a load of
# concurrent scrapes with memory flat (not judged in the ASan build).
set(GD_SERVE_FLAGS "")
if(GD_SANITIZE)
  set(GD_SERVE_FLAGS "--sanitized")
endif()
add_test(NAME serve_e2e
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/serve/serve_test.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} ${GD_SERVE_FLAGS})
set_tests_properties(serve_e2e PROPERTIES TIMEOUT 300)
