# `gpudoctor check --slurm` against a real single-node Slurm (munged,
# slurmctld and slurmd on 127.0.0.1, started and stopped by the test):
# drained with gpudoctor's reason on a failing scenario, resumed after it
# clears, an admin's drain kept, the Epilog over hostile jobs
# (tests/slurm/slurm_test.py). Skipped (77)
# when not root, without slurm-wlm and munge, and in the sanitized build.
set(GD_SLURM_FLAGS "")
if(GD_SANITIZE)
  set(GD_SLURM_FLAGS "--sanitized")
endif()
add_test(NAME slurm_health
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/slurm/slurm_test.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR} ${GD_SLURM_FLAGS})
set_tests_properties(slurm_health PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240 RUN_SERIAL TRUE)

# The shipped Epilog run as slurmd runs it, on the directories and ids a
# user could arrange (tests/slurm/epilog_test.py); the parts that need a real
# Slurm (a hostile job name, another user's summary) are slurm_health's.
# Skipped (77) when not root.
add_test(NAME slurm_epilog
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/slurm/epilog_test.py)
set_tests_properties(slurm_epilog PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
