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

# Floods beside well-behaved scrapes (tests/reliability/http_floods.py):
# keep-alive /healthz holders, reconnecting idle clients, stalled TLS
# handshakes and a failed basic-auth flood (its 401s within the per-address
# allowance), each for a few seconds with fixed counts; an unknown user's
# 401 costs a known user's. Alone (RUN_SERIAL): its scrapes have 1 s each,
# which a parallel test's load on a 2-core machine should not decide.
add_test(NAME reliability_http_floods
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/reliability/http_floods.py
    $<TARGET_FILE:gpudoctor> ${GD_HTTP_ATTACK_FLAGS})
set_tests_properties(reliability_http_floods PROPERTIES TIMEOUT 120 RUN_SERIAL TRUE)
