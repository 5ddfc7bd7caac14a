// How many GPUs a job's launcher starts one process for, read from its
// command line: torchrun / python -m torch.distributed.run|launch
// (--nproc_per_node, --nproc-per-node), deepspeed (--num_gpus, --num-gpus)
// and accelerate launch (--num_processes, on one machine). Each process
// takes the GPU of its local rank, so a job asking for more than the
// visible GPUs fails on the first rank past them with CUDA error 101,
// "invalid device ordinal" (docs/nvidia-facts.md §3). Pure, no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gd {

struct JobRequest {
  int gpus = 0;         // processes per node, one GPU each
  std::string request;  // the words that ask: "torchrun --nproc_per_node=8"
};

// nullopt when no known launcher with a GPU count is on the line, or its
// count is not a number ("gpu", "auto": as many as are visible).
std::optional<JobRequest> job_gpu_request(const std::vector<std::string>& argv);

// The same from one shell command line, split at blanks (quotes are not
// read: the count options take none).
std::optional<JobRequest> job_gpu_request(std::string_view command_line);

}  // namespace gd
