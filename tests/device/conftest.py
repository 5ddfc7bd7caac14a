"""pytest (ctest device_compare) collects test_*.py here; recorded_test.py is
its own ctest (device_recorded, cmake/tests-device.cmake) on tests/harness.py,
not a pytest module. test_busy.py is its own ctest too (device_busy: it runs
scripts/device-busy.sh three times); named on the command line, pytest runs
it all the same."""
collect_ignore = ["recorded_test.py", "test_busy.py"]
