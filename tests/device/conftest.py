"""pytest (ctest device_compare) collects test_*.py here; recorded_test.py is
its own ctest (device_recorded, cmake/tests-device.cmake) on tests/harness.py,
not a pytest module."""
collect_ignore = ["recorded_test.py"]
