# "A running job is sacred" end to end (tests/contexts/run.py): check,
# snapshot and topo over recorded trees and the fakes, counting the CUDA
# contexts the fake libcuda logs ($GPUDOCTOR_FAKE_CUDA_CONTEXT_LOG): none on
# a GPU a job uses or where NVML did not answer, one per idle GPU per run.
add_test(NAME contexts_e2e
  COMMAND Python3::Interpreter ${CMAKE_SOURCE_DIR}/tests/contexts/run.py
    $<TARGET_FILE:gpudoctor> ${GD_FAKES_DIR})
set_tests_properties(contexts_e2e PROPERTIES TIMEOUT 300)
