# Attacks on the exporter's HTTP server (tests/reliability/http_attacks.py):
# Range flood with the daemon's peak memory, Range ignored everywhere, listen
# backlog and a connect burst, 100 slow clients beside scrapes, an endless
# request head, pipelining, refused requests closed at once, the header-count
# limit. Memory is not judged in the ASan build.
set(GD_HTTP_ATTACK_FLAGS "")
if(GD_SANITIZE)
  set(GD_HTTP_ATTACK_FLAGS "--sanitized")
endif()
add_test(NAME reliability_http_attacks
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/reliability/http_attacks.py
    $<TARGET_FILE:gpudoctor> ${GD_HTTP_ATTACK_FLAGS})
set_tests_properties(reliability_http_attacks PROPERTIES TIMEOUT 180)
