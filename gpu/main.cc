// gpudoctor-diag: the active tests on the GPUs named on the command line
// (README.md): parse the arguments, say hello (library versions), open each
// GPU by its PCI bus id, run the tests of the level in order, say done.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_util.h"
#include "emit.h"
#include "helper.h"

namespace gdgpu {
namespace {

constexpr int kExitUsage = 64;
constexpr int kExitNoGpu = 2;

const char kUsage[] =
    "usage: gpudoctor-diag --level 1|2|3 --gpu BUS[@CPUS] [--gpu ...] [--duration S]\n"
    "                      [--seed N] [--plant-fault gemm|memory]\n"
    "\n"
    "Runs gpudoctor's active GPU tests and answers in JSON lines on stdout\n"
    "(gpudoctor.diag-helper/v1). BUS is a PCI bus id (0000:17:00.0); CPUS the\n"
    "GPU's NUMA-local CPU list (0-15,32-47) for its pinned host buffers.\n"
    "--duration: each sustained test's length in seconds (default 20).\n"
    "--seed: the random memory pattern and the GEMM inputs (default 1).\n"
    "--plant-fault: a deliberate fault, to prove the checks catch it.\n";

struct Args {
  HelperOptions opt;
  std::vector<Gpu> gpus;
  bool help = false;
};

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Hex field of 1..max_digits digits -> value; false otherwise.
bool parse_hex(const std::string& s, size_t max_digits, unsigned long* out) {
  if (s.empty() || s.size() > max_digits) return false;
  for (char c : s)
    if (!is_hex(c)) return false;
  *out = std::strtoul(s.c_str(), nullptr, 16);
  return true;
}

// "0000:17:00.0", "17:00.0", "0000:17:00.0" in upper case -> "0000:17:00.0";
// "" when it is not a PCI bus id (domain up to 8 hex digits, bus 2, device 2
// (< 0x20), function 1 (< 8)).
std::string normalize_bus_id(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ':') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (parts.size() == 2) parts.insert(parts.begin(), "0");
  if (parts.size() != 3) return "";
  const size_t dot = parts[2].find('.');
  if (dot == std::string::npos) return "";
  unsigned long domain = 0, bus = 0, dev = 0, fn = 0;
  if (!parse_hex(parts[0], 8, &domain) || !parse_hex(parts[1], 2, &bus) ||
      !parse_hex(parts[2].substr(0, dot), 2, &dev) || !parse_hex(parts[2].substr(dot + 1), 1, &fn))
    return "";
  if (dev >= 0x20 || fn >= 8) return "";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lx:%02lx:%02lx.%lx", domain, bus, dev, fn);
  return buf;
}

// A kernel CPU list: "0-15,32-47". Only its shape; CpuPin applies it.
bool valid_cpu_list(const std::string& s) {
  if (s.empty()) return false;
  bool digit_before = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      digit_before = true;
    } else if ((c == ',' || c == '-') && digit_before && i + 1 < s.size()) {
      digit_before = false;
    } else {
      return false;
    }
  }
  return true;
}

bool parse_uint64(const std::string& s, uint64_t* out) {
  if (s.empty() || s[0] < '0' || s[0] > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// Parses argv into args; "" on success, else the usage error (one line).
std::string parse_args(int argc, char** argv, Args* args) {
  bool have_level = false;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    std::string value;
    bool has_value = false;
    if (flag == "--help" || flag == "-h") {
      args->help = true;
      return "";
    }
    if (flag.rfind("--", 0) != 0) return "unexpected argument '" + flag + "'";
    const size_t eq = flag.find('=');
    if (eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (flag != "--level" && flag != "--gpu" && flag != "--duration" && flag != "--seed" &&
        flag != "--plant-fault")
      return "unknown option '" + flag + "'";
    if (!has_value) {
      if (i + 1 >= argc) return flag + " needs a value";
      value = argv[++i];
    }
    if (flag == "--level") {
      if (value != "1" && value != "2" && value != "3")
        return "--level must be 1, 2 or 3, not '" + value + "'";
      args->opt.level = value[0] - '0';
      have_level = true;
    } else if (flag == "--gpu") {
      const size_t at = value.find('@');
      Gpu g;
      g.bus_id = normalize_bus_id(value.substr(0, at));
      if (g.bus_id.empty())
        return "--gpu: '" + value.substr(0, at) + "' is not a PCI bus id (0000:17:00.0)";
      if (at != std::string::npos) {
        g.cpus = value.substr(at + 1);
        if (!valid_cpu_list(g.cpus))
          return "--gpu: '" + g.cpus + "' is not a CPU list (0-15,32-47)";
      }
      for (const Gpu& other : args->gpus)
        if (other.bus_id == g.bus_id) return "--gpu " + g.bus_id + " given twice";
      args->gpus.push_back(g);
    } else if (flag == "--duration") {
      char* end = nullptr;
      errno = 0;
      const double d = std::strtod(value.c_str(), &end);
      if (value.empty() || errno != 0 || *end != '\0' || !std::isfinite(d) || d <= 0 || d > 86400)
        return "--duration must be a number of seconds in (0, 86400], not '" + value + "'";
      args->opt.duration_s = d;
    } else if (flag == "--seed") {
      if (!parse_uint64(value, &args->opt.seed))
        return "--seed must be an unsigned integer, not '" + value + "'";
    } else if (flag == "--plant-fault") {
      if (value != "gemm" && value != "memory")
        return "--plant-fault must be gemm or memory, not '" + value + "'";
      args->opt.plant_fault = value;
    }
  }
  if (!have_level) return "--level is required";
  if (args->gpus.empty()) return "at least one --gpu is required";
  return "";
}

void say_hello() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);  // 0 when no driver is installed
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  int nccl = 0;
  ncclGetVersion(&nccl);
  Line("hello")
      .set("schema", "gpudoctor.diag-helper/v1")
      .set("cuda_runtime", runtime)
      .set("cuda_driver", driver)
      .set("cublas", major * 10000 + minor * 100 + patch)
      .set("nccl", nccl)
      .send();
}

// Finds the GPU, fills in its figures and writes its device line; false
// (after an error line) when it cannot be opened.
bool open_gpu(Gpu* gpu) {
  cudaError_t rc = cudaDeviceGetByPCIBusId(&gpu->cuda_index, gpu->bus_id.c_str());
  if (rc != cudaSuccess) {
    emit_error("device", gpu->bus_id, cuda_error("cudaDeviceGetByPCIBusId", rc));
    return false;
  }
  cudaDeviceProp prop;
  std::memset(&prop, 0, sizeof(prop));
  if ((rc = cudaGetDeviceProperties(&prop, gpu->cuda_index)) != cudaSuccess) {
    emit_error("device", gpu->bus_id, cuda_error("cudaGetDeviceProperties", rc));
    return false;
  }
  int clock_khz = 0, mem_clock_khz = 0, bus_width_bits = 0;
  // Attributes that are not reported stay 0 ("unknown" to the parent).
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, gpu->cuda_index);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, gpu->cuda_index);
  cudaDeviceGetAttribute(&bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, gpu->cuda_index);
  cudaGetLastError();  // clear what a missing attribute left
  // cudaSetDevice creates the primary context, which cudaMemGetInfo needs.
  size_t free_bytes = 0, total_bytes = 0;
  if ((rc = cudaSetDevice(gpu->cuda_index)) != cudaSuccess ||
      (rc = cudaMemGetInfo(&free_bytes, &total_bytes)) != cudaSuccess) {
    emit_error("device", gpu->bus_id, cuda_error("cudaSetDevice/cudaMemGetInfo", rc));
    return false;
  }
  gpu->cc_major = prop.major;
  gpu->cc_minor = prop.minor;
  gpu->multiprocessors = prop.multiProcessorCount;
  gpu->free_bytes = free_bytes;
  gpu->total_bytes = prop.totalGlobalMem;
  Line("device")
      .set("gpu", gpu->bus_id)
      .set("cuda_index", gpu->cuda_index)
      .set("name", std::string(prop.name))
      .set("cc_major", prop.major)
      .set("cc_minor", prop.minor)
      .set("multiprocessors", prop.multiProcessorCount)
      .set("memory_bytes", static_cast<uint64_t>(prop.totalGlobalMem))
      .set("free_bytes", static_cast<uint64_t>(free_bytes))
      .set("clock_khz", clock_khz)
      .set("mem_clock_khz", mem_clock_khz)
      .set("mem_bus_width_bits", bus_width_bits)
      .send();
  return true;
}

// The per-GPU tests of the level, in README order; false once the GPU is
// unusable (the remaining tests are skipped with an error line).
bool run_gpu_tests(const Gpu& gpu, const HelperOptions& opt) {
  struct Step {
    const char* test;
    bool (*run)(const Gpu&, const HelperOptions&);
    int min_level;
  };
  static const Step kSteps[] = {
      {"context", run_context_test, 1}, {"kernel", run_kernel_test, 1}, {"copy", run_copy_tests, 1},
      {"memtest", run_memtest, 2},      {"gemm", run_gemm_tests, 2},
  };
  for (const Step& step : kSteps) {
    if (opt.level < step.min_level) continue;
    if (!step.run(gpu, opt)) {
      emit_error(step.test, gpu.bus_id,
                 std::string("GPU unusable after the ") + step.test +
                     " test; its remaining tests are skipped");
      return false;
    }
  }
  return true;
}

int run(Args& args) {
  say_hello();
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    emit_error("init", "", cuda_error("cudaGetDeviceCount", rc));
    Line("done").send();
    return kExitNoGpu;
  }
  std::vector<Gpu> opened;
  for (Gpu& gpu : args.gpus)
    if (open_gpu(&gpu)) opened.push_back(gpu);
  if (opened.empty()) {
    Line("done").send();
    return kExitNoGpu;
  }
  std::vector<Gpu> usable;
  for (const Gpu& gpu : opened)
    if (run_gpu_tests(gpu, args.opt)) usable.push_back(gpu);
  if (args.opt.level >= 3) {
    run_p2p_tests(usable, args.opt);
    run_nccl_tests(usable, args.opt);
  }
  Line("done").send();
  return 0;
}

}  // namespace
}  // namespace gdgpu

int main(int argc, char** argv) {
  gdgpu::Args args;
  const std::string err = gdgpu::parse_args(argc, argv, &args);
  if (!err.empty()) {
    std::fprintf(stderr, "gpudoctor-diag: %s\n", err.c_str());
    return gdgpu::kExitUsage;
  }
  if (args.help) {
    std::fputs(gdgpu::kUsage, stdout);
    return 0;
  }
  gdgpu::claim_stdout();
  return gdgpu::run(args);
}
