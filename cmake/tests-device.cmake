# Real machines as goldens (tests/device/recorded_test.py): every record in
# tests/device/recorded/<machine>/ replays clean, its staged faults give their
# cause first, PyTorch's text under each fault gives it through explain, and
# explain reads its nvidia-smi outputs as the machine's own snapshot.
add_test(NAME device_recorded
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/device/recorded_test.py
    $<TARGET_FILE:gpudoctor>)
set_tests_properties(device_recorded PROPERTIES TIMEOUT 120)
