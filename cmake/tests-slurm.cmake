# `gpudoctor check --slurm` against a real single-node Slurm (munged,
# slurmctld and slurmd on 127.0.0.1, started and stopped by the test):
# drained with gpudoctor's reason on a failing scenario, resumed after it
# clears, an admin's drain kept (tests/slurm/slurm_test.py). Skipped (77)
# when not root, without slurm-wlm and munge, and in the sanitized build.
set(GD_SLURM_FLAGS "")
if(GD_SANITIZE)
  set(GD_SLURM_FLAGS "--sanitized")
endif()
add_test(NAME slurm_health
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/slurm/slurm_test.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} ${GD_SLURM_FLAGS})
set_tests_properties(slurm_health PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240 RUN_SERIAL TRUE)
