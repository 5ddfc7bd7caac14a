# Real machines as goldens (tests/device/recorded_test.py): every record in
# tests/device/recorded/<machine>/ replays clean, its staged faults give their
# cause first, PyTorch's text under each fault gives it through explain, and
# explain reads its nvidia-smi outputs as the machine's own snapshot.
add_test(NAME device_recorded
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/device/recorded_test.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(device_recorded PROPERTIES TIMEOUT 120)

# scripts/device-busy.sh without a GPU (tests/device/test_busy.py): a job's
# stand-in measured while gpudoctor's check, snapshot, Slurm check and serve
# run beside it on the fake libraries. Its own test (about 40 s on a loaded
# machine) rather than part of device_compare, whose 300 s it would crowd;
# tests/device/conftest.py leaves it out of that one. Not in sanitized
# builds, as device_compare.
if(NOT GD_SANITIZE)
  add_test(NAME device_busy
    COMMAND ${CMAKE_COMMAND} -E env GD_BINARY=$<TARGET_FILE:gpudoctor> GD_FAKES_DIR=${GD_FAKES_DIR}
      GD_SOURCE_DIR=${CMAKE_SOURCE_DIR} PYTHONDONTWRITEBYTECODE=1
      /usr/bin/python3 -m pytest -q -p no:cacheprovider ${CMAKE_SOURCE_DIR}/tests/device/test_busy.py)
  set_tests_properties(device_busy PROPERTIES TIMEOUT 240)
endif()
