# Fleet drift (`gpudoctor diff`) and the systemd unit.

# Golden outputs over the fleet of recorded nodes (tests/diff/run.py ... --update).
add_test(NAME diff_golden
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/diff/run.py $<TARGET_FILE:gpudoctor>)

# The fleet stays what its generator writes: each node recorded by the real
# `gpudoctor snapshot` over the recorded tree and the fakes.
add_test(NAME diff_nodes_up_to_date
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/diff/make_nodes.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} --check)

# deploy/systemd/gpudoctor.service: the hardening it promises is there,
# `systemd-analyze verify` and `security --offline` accept it, and
# `gpudoctor serve` accepts its ExecStart flags and stops cleanly on SIGTERM
# (our own daemon on a loopback port, so it runs in sanitized builds too).
add_test(NAME systemd_unit
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/deploy/systemd/check_unit.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(systemd_unit PROPERTIES TIMEOUT 120)
