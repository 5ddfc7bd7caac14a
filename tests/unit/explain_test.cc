// explain: pasted text -> snapshot fields -> the same checks -> ranked report.
#include "explain/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "catalog/cuda_errors.h"
#include "catalog/error_phrases.h"
#include "checks/runner.h"
#include "explain/parse.h"

namespace gd {
namespace {

Report explain(const Snapshot& s) { return explain_snapshot(s, Config{}); }

const Finding* find(const Report& r, const std::string& id) {
  for (const auto& f : r.findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// The id explain ranks first for a text; "" when it finds nothing.
std::string first_id(std::string_view text) {
  Report r = explain(snapshot_from_text(text));
  return r.findings.empty() ? "" : r.findings[0].id;
}

bool unobserved(const Snapshot& s, const std::string& src) {
  return std::find(s.unobserved.begin(), s.unobserved.end(), src) != s.unobserved.end();
}

constexpr const char* kTorchOom =
    "/opt/venv/lib/python3.11/site-packages/torch/cuda/__init__.py:128: UserWarning: CUDA "
    "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error 2: out of "
    "memory (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)\n";

TEST(ExplainParse, TorchOutOfMemoryFillsTheUserRun) {
  Snapshot s = snapshot_from_text(kTorchOom);
  ASSERT_EQ(s.cuda.runs.size(), 1u);
  EXPECT_EQ(s.cuda.runs[0].label, "user");
  EXPECT_EQ(s.cuda.runs[0].cudart_rc, 2);
  // The code's line, and the same line as one that shows an error.
  ASSERT_EQ(s.reported.size(), 2u);
  EXPECT_EQ(s.reported[1].kind, "error-line");
  EXPECT_EQ(s.reported[0].kind, "cuda-runtime");
  EXPECT_EQ(s.reported[0].line_no, 1);
  EXPECT_EQ(s.reported[0].text, "out of memory");
  EXPECT_TRUE(unobserved(s, "driver"));
  EXPECT_TRUE(unobserved(s, "limits"));
  EXPECT_FALSE(unobserved(s, "cuda"));
}

TEST(ExplainReport, CausesBeforeTheSymptom) {
  Snapshot s = snapshot_from_text(kTorchOom);
  Report r = explain(s);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "memory.address-space-limit");
  EXPECT_EQ(r.findings[0].severity, Severity::kWarn);
  EXPECT_NE(r.findings[0].summary.find("Possible cause"), std::string::npos);
  ASSERT_FALSE(r.findings[0].evidence.empty());
  EXPECT_EQ(r.findings[0].evidence[0].rfind("line 1: ", 0), 0u);
  const Finding* init = find(r, "cuda.init-failed");
  ASSERT_NE(init, nullptr);
  EXPECT_EQ(init->severity, Severity::kFail);
  EXPECT_EQ(init->follows_from, "memory.address-space-limit");
  // No check that needs the unobserved limits ran.
  for (const auto& f : r.findings) EXPECT_NE(f.check, "address-space");
}

TEST(ExplainParse, NvidiaSmiTable) {
  Snapshot s = snapshot_from_text(
      "+-----------------------------------------------------------------------------------------+"
      "\n"
      "| NVIDIA-SMI 550.54.14              Driver Version: 550.54.14      CUDA Version: 12.4     "
      "|\n"
      "|=========================================+========================+======================|"
      "\n"
      "|   0  NVIDIA GeForce RTX 4090        Off |   00000000:41:00.0 Off |                  Off "
      "|\n"
      "|  0%   38C    P8             22W /  450W |   23000MiB /  24564MiB |      0%   E. Process "
      "|\n"
      "|                                         |                        |                  N/A "
      "|\n"
      "+-----------------------------------------+------------------------+----------------------+"
      "\n"
      "| Processes:                                                                              "
      "|\n"
      "|    0   N/A  N/A      4242      C   python                                      23000MiB "
      "|\n");
  ASSERT_EQ(s.nvml.gpus.size(), 1u);
  const NvmlGpu& g = s.nvml.gpus[0];
  EXPECT_EQ(s.nvml.init_rc, 0);
  EXPECT_EQ(s.nvml.driver_version.value, "550.54.14");
  EXPECT_EQ(s.nvml.cuda_driver_version.value, 12040);
  EXPECT_EQ(g.pci_bus_id.value, "0000:41:00.0");
  EXPECT_EQ(g.name.value, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(g.persistence_mode.value, 0);
  EXPECT_EQ(g.memory_used_bytes.value, 23000ull << 20);
  EXPECT_EQ(g.memory_total_bytes.value, 24564ull << 20);
  EXPECT_EQ(g.compute_mode.value, 3);
  ASSERT_EQ(g.processes.value.size(), 1u);
  EXPECT_EQ(g.processes.value[0].pid, 4242u);
  EXPECT_FALSE(unobserved(s, "nvml"));
}

TEST(ExplainReport, LibraryMismatchFromNvidiaSmi) {
  Snapshot s = snapshot_from_text(
      "$ nvidia-smi\nFailed to initialize NVML: Driver/library "
      "version mismatch\nNVML library version: 550.90\n");
  EXPECT_EQ(s.nvml.init_rc, 18);
  EXPECT_EQ(s.nvml.nvml_version.value, "550.90");
  Report r = explain(s);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.library-mismatch");
}

TEST(ExplainReport, ContainerPromptTipsTheMismatchToTheContainer) {
  Snapshot s = snapshot_from_text(
      "root@9c1e77d2a4b0:/workspace# nvidia-smi\nFailed to initialize NVML: Driver/library "
      "version mismatch\n");
  Report r = explain(s);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "container.driver-mismatch");
}

// Lines from public threads (tests/cases/ holds each with its URL).
TEST(ExplainReport, AnErrorsOwnTextNamesItsCodeInAnyWrapper) {
  for (const char* line :
       {"ggml_cuda_init: failed to initialize CUDA: system not yet initialized",
        "Failed to allocate device vector A (error code system not yet initialized)!",
        "Test CUDA failure common.cu:941 'system not yet initialized'"}) {
    Report r = explain(snapshot_from_text(std::string(line) + "\n"));
    ASSERT_FALSE(r.findings.empty()) << line;
    EXPECT_EQ(r.findings[0].id, "fabric-manager.not-running") << line;
  }
  Report ecc =
      explain(snapshot_from_text("RuntimeError: CUDA error: uncorrectable ECC error "
                                 "encountered\n"));
  ASSERT_FALSE(ecc.findings.empty());
  EXPECT_EQ(ecc.findings[0].id, "ecc.uncorrectable");
  // A short, general text ("unknown error") names no code by itself.
  EXPECT_EQ(find_cuda_error_in_text("worker exited: unknown error"), nullptr);
  EXPECT_EQ(find_cuda_error_in_text("error 804: forward compatibility was attempted on non "
                                    "supported hw")
                ->code,
            804);
}

TEST(ExplainReport, ADockerRunThatAskedForNoGpu) {
  const std::string err =
      "/sd-cli: error while loading shared libraries: libcuda.so.1: cannot open shared object "
      "file: No such file or directory\n";
  Report bare = explain(snapshot_from_text("$ docker run -it --rm img:cuda\n" + err));
  ASSERT_FALSE(bare.findings.empty());
  EXPECT_EQ(bare.findings[0].id, "container.no-gpus");
  Report asked = explain(snapshot_from_text("$ docker run --gpus all -it --rm img:cuda\n" + err));
  ASSERT_FALSE(asked.findings.empty());
  EXPECT_NE(asked.findings[0].id, "container.no-gpus");
  // docker-compose's own line is a container too.
  Snapshot compose = snapshot_from_text(
      "Creating vqgan-clip-docker_generate_run ... done\nRuntimeError: Found no NVIDIA driver on "
      "your system.\n");
  EXPECT_EQ(explain(compose).findings.at(0).id, "container.no-gpus");
}

TEST(ExplainParse, CodesInTheFormsProgramsPrintThem) {
  EXPECT_EQ(snapshot_from_text("cudaGetDeviceCount returned 100\n").cuda.runs.at(0).cudart_rc, 100);
  EXPECT_EQ(snapshot_from_text("THCudaCheck FAIL file=/w/THCGeneral.cpp line=47 error=999 : "
                               "unknown error\n")
                .cuda.runs.at(0)
                .cudart_rc,
            999);
  EXPECT_EQ(snapshot_from_text("CUDA driver init failure: 802\n").cuda.runs.at(0).cudart_rc, 802);
  // A number that is no start-up failure says nothing: an exit status, an
  // invalid ordinal (after CUDA started).
  EXPECT_TRUE(snapshot_from_text("error running hook: exit status 1, stderr: nvidia-container-cli: "
                                 "requirement error: unsatisfied condition: cuda>=11.0\n")
                  .cuda.runs.empty());
  Snapshot ordinal = snapshot_from_text("RuntimeError: cuda runtime error (101) : x\n");
  EXPECT_TRUE(ordinal.cuda.runs.empty() || ordinal.cuda.runs.at(0).cudart_rc != 101);
}

TEST(ExplainParse, PynvmlExceptionNamesAreNvmlCodes) {
  Snapshot s = snapshot_from_text("pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded\n");
  EXPECT_EQ(s.nvml.init_rc, 9);
  EXPECT_EQ(snapshot_from_text("NVMLError_LibRmVersionMismatch\n").nvml.init_rc, 18);
  EXPECT_EQ(snapshot_from_text("NVMLError_GpuIsLost\n").nvml.init_rc, 15);
  // A name that is no NVML code says nothing.
  EXPECT_NE(snapshot_from_text("NVMLError_NoSuchThing\n").nvml.init_rc, 9);
}

TEST(ExplainReport, PhrasesFromTheTableGiveTheirCauses) {
  Report stub = explain(snapshot_from_text(
      "AttributeError: /scratch/opt/cuda-12.1/lib64/stubs/libcuda.so: undefined symbol: _undef\n"));
  ASSERT_FALSE(stub.findings.empty());
  EXPECT_EQ(stub.findings[0].id, "cuda.stub-library");
  Report rpc = explain(snapshot_from_text(
      "nvidia-container-cli: initialization error: driver rpc error: timed out: unknown.\n"));
  ASSERT_FALSE(rpc.findings.empty());
  EXPECT_EQ(rpc.findings[0].id, "persistence-mode.off");
  for (const ErrorPhrase& p : error_phrases()) {
    EXPECT_EQ(find_error_phrase(p.all_of.front()), p.all_of.size() == 1 ? &p : nullptr)
        << p.seen_in;
    // The first words are indexed by their first four bytes.
    EXPECT_GE(std::string_view(p.all_of.front()).size(), 4u) << p.seen_in;
  }
}

TEST(ExplainReport, OtherLinesDecide999) {
  std::string err =
      "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, "
      "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n";
  // Alone: the corpus's prior (docs/explain.md "Priors").
  EXPECT_EQ(explain(snapshot_from_text(err)).findings.at(0).id, "driver.after-suspend");
  Snapshot s = snapshot_from_text("Mar 02 09:12:44 ws kernel: PM: suspend exit\n" + err);
  EXPECT_EQ(s.cuda.runs.at(0).cudart_rc, 999);
  EXPECT_EQ(explain(s).findings.at(0).id, "driver.after-suspend");
  s = snapshot_from_text("ls: cannot access '/dev/nvidia-uvm': No such file or directory\n" + err);
  EXPECT_EQ(explain(s).findings.at(0).id, "uvm.missing");
}

TEST(ExplainReport, EachFindingSaysWhatDecidedItsPlace) {
  Report r = explain(snapshot_from_text(
      "Mar 02 09:12:44 ws kernel: PM: suspend exit\n"
      "RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, "
      "e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.\n"));
  const Finding& first = r.findings.at(0);
  EXPECT_EQ(first.id, "driver.after-suspend");
  EXPECT_EQ(first.ranked_by,
            "possible cause: the text shows CUDA error 999; other lines weigh for it (+2: the "
            "kernel log shows a resume from suspend (facts §3, 999)); candidate 1 in the facts' "
            "order for it");
  const Finding* symptom = find(r, "cuda.init-failed");
  ASSERT_NE(symptom, nullptr);
  EXPECT_EQ(symptom->ranked_by, "a symptom: it follows from the first cause");
  Report confirmed = explain(snapshot_from_text(
      "[    4.1] NVRM: The NVIDIA GeForce GT 710 GPU installed in this system is\n"
      "[    4.1] NVRM:  supported through the NVIDIA 470.xx Legacy drivers.\n"));
  EXPECT_EQ(confirmed.findings.at(0).ranked_by.rfind("confirmed: the gpu-supported check", 0), 0u)
      << confirmed.findings.at(0).ranked_by;
}

TEST(ExplainReport, ForkAfterInitIsConfirmed) {
  Snapshot s = snapshot_from_text(
      "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
      "multiprocessing, you must use the 'spawn' start method\n");
  Report r = explain(s);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "cuda.fork-after-init");
  EXPECT_EQ(r.findings[0].severity, Severity::kFail);
  EXPECT_EQ(r.findings[0].check, "fork-after-init");
}

TEST(ExplainReport, ContainerRuntimeErrors) {
  Report r = explain(snapshot_from_text(
      "docker: Error response from daemon: could not select device driver \"\" with "
      "capabilities: [[gpu]].\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "container.runtime-not-configured");

  r = explain(snapshot_from_text(
      "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update "
      "your driver to a newer version, or use an earlier cuda container: unknown.\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.too-old-for-cuda");

  r = explain(snapshot_from_text(
      "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.not-loaded");
}

TEST(ExplainParse, EnvIsAllowListed) {
  Snapshot s = snapshot_from_text(
      "CUDA_VISIBLE_DEVICES=1,x,0\nexport LD_LIBRARY_PATH=/usr/local/cuda/lib64\n"
      "AWS_SECRET_ACCESS_KEY=abc\nHOME=/root\n");
  EXPECT_EQ(s.env.vars.size(), 2u);
  EXPECT_EQ(s.env.vars.at("CUDA_VISIBLE_DEVICES"), "1,x,0");
  EXPECT_EQ(s.env.vars.count("AWS_SECRET_ACCESS_KEY"), 0u);
  Report r = explain(s);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "visible-devices.invalid");
}

TEST(ExplainParse, AssignmentsBeforeACommandAreItsEnvironment) {
  Snapshot s = snapshot_from_text(
      "(py35) ~/pytorch/examples/mnist$ CUDA_VISIBLE_DEVICES=2 NCCL_DEBUG='INFO' python main.py\n"
      "root@pod:/w# AWS_SECRET_ACCESS_KEY=abc CUDA_DEVICE_ORDER=PCI_BUS_ID torchrun x.py\n");
  EXPECT_EQ(s.env.vars.at("CUDA_VISIBLE_DEVICES"), "2");
  EXPECT_EQ(s.env.vars.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(s.env.vars.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(s.env.vars.count("AWS_SECRET_ACCESS_KEY"), 0u);
  // A sentence is no command: nothing is read from it.
  Snapshot prose = snapshot_from_text("CUDA_HOME=/usr/local/cuda is set in my shell\n");
  EXPECT_TRUE(prose.env.vars.empty());
}

TEST(ExplainReport, TheDriversWordInTheLogConfirmsTheCause) {
  Report unsupported = explain(snapshot_from_text(
      "[    3.513141] NVRM: Open nvidia.ko is only ready for use on Data Center GPUs.\n"
      "[    3.824916] NVRM: GPU 0000:04:00.0: RmInitAdapter failed! (0x63:0x0:1905)\n"));
  ASSERT_GE(unsupported.findings.size(), 2u);
  EXPECT_EQ(unsupported.findings[0].id, "driver.gpu-unsupported");
  EXPECT_EQ(unsupported.findings[0].severity, Severity::kFail);
  const Finding* load = find(unsupported, "driver.module-load-failed");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->follows_from, "driver.gpu-unsupported");

  EXPECT_EQ(first_id("[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to NovaCore.\n"
                     "[  201.913648] NVRM: No NVIDIA devices probed.\n"),
            "driver.nouveau");
  // vfio-pci owning the GPU is deliberate passthrough, not nouveau.
  Report vfio = explain(
      snapshot_from_text("[  201.910514] NVRM: GPU 0000:01:00.0 is already bound to vfio-pci.\n"));
  const Finding* nouveau = find(vfio, "driver.nouveau");
  EXPECT_TRUE(nouveau == nullptr || nouveau->severity != Severity::kFail);
}

TEST(ExplainReport, AHangOverPcieOnlyGpusPointsAtPeerToPeer) {
  const std::string topo =
      "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tPXB\t0-27\t0\n"
      "GPU1\tPXB\t X \t0-27\t0\n";
  EXPECT_EQ(first_id(topo + "all_reduce_perf hangs on these two GPUs.\n"), "p2p.blocked");
  // NVLink between them: no PCIe path to blame.
  Report nv = explain(snapshot_from_text(
      "GPU0\t X \tNV12\t0-27\t0\nGPU1\tNV12\t X \t0-27\t0\nall_reduce_perf hangs\n"));
  EXPECT_EQ(find(nv, "p2p.blocked"), nullptr);
  // A topology alone is no complaint.
  EXPECT_EQ(find(explain(snapshot_from_text(topo)), "p2p.blocked"), nullptr);
}

TEST(ExplainReport, AMissingDeviceNodeIsACauseOnItsOwn) {
  EXPECT_EQ(first_id("ls: cannot access '/dev/nvidia-uvm': No such file or directory\n"),
            "uvm.missing");
  EXPECT_EQ(first_id("modprobe: FATAL: Module nvidia-uvm not found in directory "
                     "/lib/modules/5.4.0-42-generic\n"),
            "uvm.missing");
  EXPECT_EQ(first_id("open(\"/dev/nvidiactl\"): No such file or directory\n"), "devnodes.missing");
}

TEST(ExplainReport, NvidiaInstallersLoadFailureAndItsListOfReasons) {
  // The sentence names nouveau as an example; that is no sign of nouveau.
  EXPECT_EQ(first_id("ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most "
                     "frequently when ... or if another driver, such as nouveau, is present and "
                     "prevents the NVIDIA kernel module from obtaining ownership\n"),
            "driver.module-load-failed");
}

TEST(ExplainReport, NvidiaSmisHeaderSaysADriverIsLoaded) {
  Report r = explain(snapshot_from_text(
      "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n"
      "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).\n"));
  EXPECT_EQ(r.findings.at(0).id, "driver.too-old-for-cuda");
  // "found version 11040" is the driver answering: no driver missing is listed.
  EXPECT_EQ(find(r, "driver.not-loaded"), nullptr);
  // The header alone weighs against a missing driver where the text lists it.
  r = explain(snapshot_from_text(
      "| NVIDIA-SMI 470.57.02    Driver Version: 470.57.02    CUDA Version: 11.4     |\n"
      ">>> torch.cuda.is_available()\nFalse\n"));
  const Finding* not_loaded = find(r, "driver.not-loaded");
  ASSERT_NE(not_loaded, nullptr);
  EXPECT_NE(std::find(not_loaded->evidence.begin(), not_loaded->evidence.end(),
                      "nvidia-smi shows driver 470.57.02"),
            not_loaded->evidence.end());
  EXPECT_NE(
      not_loaded->ranked_by.find("weigh against it (-2: nvidia-smi shows the driver's version"),
      std::string::npos)
      << not_loaded->ranked_by;
}

TEST(ExplainReport, NcclSharedMemoryErrorsPointAtShmSize) {
  EXPECT_EQ(first_id("misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE "
                     "to 9637892 bytes, error: No space left on device (28)\n"),
            "container.shm-too-small");
}

TEST(ExplainParse, PynvmlsOwnTextsAreNvmlCodes) {
  Snapshot s =
      snapshot_from_text("pynvml.nvml.NVMLError: RM has detected an NVML/RM version mismatch.\n");
  EXPECT_EQ(s.nvml.init_rc, 18);
  EXPECT_EQ(explain(s).findings.at(0).id, "driver.library-mismatch");
}

TEST(ExplainParse, ErrorsOfARunningProgramAreNotAFailedStart) {
  // Every CUDA 13 code is in the table now; one from a kernel launch must
  // not read as CUDA failing to start.
  Snapshot s = snapshot_from_text(
      "RuntimeError: CUDA error: invalid configuration argument\n"
      "CUDA kernel errors might be asynchronously reported at some other API call\n");
  EXPECT_TRUE(s.cuda.runs.empty() || s.cuda.runs[0].cudart_rc <= 0);
  EXPECT_EQ(find(explain(s), "cuda.init-failed"), nullptr);
}

TEST(ExplainParse, PastesInEveryEncodingReadAlike) {
  const std::string line = "RuntimeError: CUDA error: system not yet initialized\n";
  auto utf16 = [](const std::string& t, bool bom, bool big) {
    std::string out = bom ? (big ? std::string("\xfe\xff") : std::string("\xff\xfe")) : "";
    for (char c : t) out += big ? std::string{'\0', c} : std::string{c, '\0'};
    return out;
  };
  for (const std::string& text :
       {line, utf16(line, true, false), utf16(line, false, false), utf16(line, true, true),
        "\xef\xbb\xbf" + line,
        std::string(
            "\x1b[31mRuntimeError: CUDA error: system not \x1b[1myet\x1b[0m initialized\r\n"),
        std::string("\x1b]0;title\aloading 10%\rloading 100%\r") + line}) {
    Snapshot s = snapshot_from_text(text);
    ASSERT_FALSE(s.cuda.runs.empty()) << text;
    EXPECT_EQ(s.cuda.runs[0].cudart_rc, 802) << text;
  }
  EXPECT_EQ(plain_text("a\rb\r\nc\x1b[2Jd\x1b[12;"), "a\nb\ncd");  // cut mid-sequence
  // A garbled sequence never takes the next line with it.
  EXPECT_EQ(plain_text("x\x1b[12\ny\x1b]0;title\nz\x1b]8;;u\x1b\\w"), "x\ny\nzw");
  EXPECT_EQ(plain_text(utf16("é", true, false)), "??");  // UTF-8 bytes read as UTF-16 units
}

TEST(ExplainReport, ALoneIsAvailableFalseListsTheLikelyCauses) {
  for (const char* text : {">>> import torch\n>>> torch.cuda.is_available()\nFalse\n",
                           "torch.cuda.is_available() returns False on my machine\n"}) {
    Report r = explain(snapshot_from_text(text));
    ASSERT_GE(r.findings.size(), 3u) << text;
    EXPECT_EQ(r.findings[0].id, "driver.not-loaded") << text;
    EXPECT_NE(find(r, "container.no-gpus"), nullptr) << text;
    for (const auto& f : r.findings) {
      bool decides = std::any_of(f.remedy.begin(), f.remedy.end(),
                                 [](const std::string& l) { return l.starts_with("To decide: "); });
      EXPECT_TRUE(decides || f.severity == Severity::kNotApplicable) << f.id;
    }
  }
  // True is no complaint; an error code in the text brings its own causes.
  EXPECT_TRUE(
      explain(snapshot_from_text(">>> torch.cuda.is_available()\nTrue\n")).findings.empty());
  Report coded = explain(snapshot_from_text(
      "torch.cuda.is_available() is False\nRuntimeError: CUDA error: CUDA driver is a stub "
      "library\n"));
  EXPECT_EQ(coded.findings.at(0).id, "cuda.stub-library");
}

TEST(ExplainReport, ALauncherAskingForMoreGpusThanVisible) {
  // The launcher and the selection in the text decide it: confirmed.
  Report r =
      explain(snapshot_from_text("$ CUDA_VISIBLE_DEVICES=2,3 torchrun --nproc_per_node=8 train.py\n"
                                 "RuntimeError: CUDA error: invalid device ordinal\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "visible-devices.ordinal-out-of-range");
  EXPECT_EQ(r.findings[0].severity, Severity::kFail);
  EXPECT_NE(r.findings[0].summary.find("torchrun --nproc_per_node=8"), std::string::npos);
  // The code alone: a possible cause, the selection second.
  r =
      explain(snapshot_from_text("RuntimeError: cuda runtime error (10) : invalid device ordinal "
                                 "at /pytorch/torch/csrc/cuda/Module.cpp:33\n"));
  ASSERT_GE(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].id, "visible-devices.ordinal-out-of-range");
  EXPECT_EQ(r.findings[0].severity, Severity::kWarn);
  EXPECT_EQ(r.findings[1].id, "visible-devices.invalid");
  // A launcher that fits what the text shows is no finding.
  r = explain(snapshot_from_text("$ torchrun --nproc_per_node=gpu train.py\n"));
  const Finding* f = find(r, "visible-devices.ordinal-out-of-range");
  EXPECT_TRUE(f == nullptr || f->severity == Severity::kNotApplicable);
}

TEST(ExplainReport, ADriverTooOldInItsOtherWords) {
  for (const char* text :
       {"libcuda.so.1: undefined symbol: cuCtxCreate_v4\n",
        "The procedure entry point cuDevicePrimaryCtxReset_v2 could not be located in the "
        "dynamic link library nvcuda.dll\n",
        "nvidia-docker | 2017/11/21 00:48:39 Error: unsupported CUDA version: driver 8.0 < image "
        "9.0.176\n",
        "ERROR: This container was built for NVIDIA Driver Release 535.86 or later, but\n"
        "       version 510.85.02 was detected and compatibility mode is UNAVAILABLE.\n"
        "\n"
        "       [[Forward compatibility was attempted on non supported HW "
        "(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) cuInit()=804]]\n"}) {
    Report r = explain(snapshot_from_text(text));
    ASSERT_FALSE(r.findings.empty()) << text;
    EXPECT_EQ(r.findings[0].id, "driver.too-old-for-cuda") << text;
  }
  // The runtime's and the libraries' symbols are other mismatches.
  for (const char* text : {"libtorch_cuda.so: undefined symbol: cudaGraphInstantiateWithFlags\n",
                           "undefined symbol: cublasLtGetVersion\n"}) {
    EXPECT_EQ(find(explain(snapshot_from_text(text)), "driver.too-old-for-cuda"), nullptr) << text;
  }
  // The banner with no version: no driver in the container.
  Report r = explain(snapshot_from_text(
      "ERROR: This container was built for NVIDIA Driver Release 515.48 or later, but\n"
      "       version  was detected and compatibility mode is UNAVAILABLE.\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "container.no-gpus");
}

TEST(ExplainReport, NoProcDriverNvidiaMeansNoModule) {
  std::string tf =
      "E tensorflow/stream_executor/cuda/cuda_driver.cc:491] failed call to cuInit: "
      "CUDA_ERROR_UNKNOWN\n"
      "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:140] kernel driver does not appear "
      "to be running on this host (h): /proc/driver/nvidia/version does not exist\n";
  Report r = explain(snapshot_from_text(tf));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.not-loaded");  // not the 999's suspend
  r = explain(snapshot_from_text("root@3f2a1b9c0d4e:/workspace# python t.py\n" + tf));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "container.no-gpus");
}

TEST(ExplainReport, Wsl) {
  // WSL 1's kernel string: no GPU there, whatever else failed.
  Report r = explain(snapshot_from_text(
      "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
      "that the latest NVIDIA driver is installed and running.\n"
      "Error! Your kernel headers for kernel 4.4.0-19041-Microsoft cannot be found.\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "wsl.no-gpu-support");
  // WSL 2 named beside a failure: the Windows side, not a Linux module.
  r =
      explain(snapshot_from_text("$ uname -r\n5.15.153.1-microsoft-standard-WSL2\n"
                                 "Failed to initialize NVML: Driver Not Loaded\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_TRUE(r.findings[0].id.starts_with("wsl.")) << r.findings[0].id;
  const Finding* native = find(r, "driver.not-loaded");
  ASSERT_NE(native, nullptr);
  EXPECT_NE(native->ranked_by.find("WSL: the Windows driver serves the GPU"), std::string::npos)
      << native->ranked_by;
  // A WSL kernel alone is no complaint.
  EXPECT_EQ(explain(snapshot_from_text("5.15.153.1-microsoft-standard-WSL2\n")).verdict,
            Severity::kOk);
  // A prompt on a Windows-named host is WSL; the container runtime's driver
  // error there is the Windows side, elsewhere a host without a driver.
  std::string driver_error =
      "docker: Error response from daemon: OCI runtime create failed: ... nvidia-container-cli: "
      "initialization error: driver error: failed to process request: unknown.\n";
  r =
      explain(snapshot_from_text("root@DESKTOP-5A67SBM:/home/u# docker run --rm --gpus=all "
                                 "nvcr.io/nvidia/k8s/cuda-sample:nbody\n" +
                                 driver_error));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "wsl.no-gpu-support");
  r = explain(
      snapshot_from_text("root@node7:/home/u# docker run --rm --gpus=all img\n" + driver_error));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.not-loaded");
  EXPECT_EQ(find(r, "wsl.no-gpu-support"), nullptr);
  // An error after CUDA started is not the Windows side's.
  r = explain(snapshot_from_text(
      "$ uname -r\n5.15.153.1-microsoft-standard-WSL2\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"));
  EXPECT_EQ(find(r, "wsl.no-gpu-support"), nullptr);
  r = explain(snapshot_from_text("4.4.0-19041-Microsoft\n"));  // WSL 1 is one
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "wsl.no-gpu-support");
}

TEST(ExplainReport, InsufficientPermissionsInARootlessContainer) {
  Report rootless = explain(
      snapshot_from_text("$ podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L\n"
                         "Failed to initialize NVML: Insufficient Permissions\n"));
  ASSERT_FALSE(rootless.findings.empty());
  EXPECT_EQ(rootless.findings[0].id, "devnodes.rootless-denied");
  // With sudo, podman is not rootless: the mode bits come first again.
  Report rootful = explain(
      snapshot_from_text("$ sudo podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L\n"
                         "Failed to initialize NVML: Insufficient Permissions\n"));
  ASSERT_FALSE(rootful.findings.empty());
  EXPECT_EQ(rootful.findings[0].id, "devnodes.permission");
  EXPECT_NE(find(rootful, "devnodes.selinux-denied"), nullptr);
}

TEST(ExplainReport, ARootlessHookThatMayNotSetTheDeviceCgroup) {
  const std::string hook =
      "nvidia-container-cli: mount error: open failed: "
      "/sys/fs/cgroup/devices/user.slice/devices.allow: permission denied\n";
  Report r = explain(snapshot_from_text(
      "$ docker -H unix:///run/user/1001/docker.sock run -it --rm --runtime=nvidia nvidia/cuda\n" +
      hook));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "container.rootless-cgroups");
  EXPECT_EQ(r.findings[0].severity, Severity::kFail);
  // The same refusal from a rootful runtime is not this cause.
  Report rootful_report = explain(snapshot_from_text("$ sudo docker run --gpus all x\n" + hook));
  const Finding* rootful = find(rootful_report, "container.rootless-cgroups");
  EXPECT_TRUE(rootful == nullptr || rootful->severity == Severity::kNotApplicable);
}

TEST(ExplainReport, NoKernelImageIsTheBuildNotTheMachine) {
  Report r = explain(snapshot_from_text(
      "UserWarning: Tesla P100-PCIE-16GB with CUDA capability sm_60 is not compatible with the "
      "current PyTorch installation.\n"
      "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "cuda.arch-not-in-build");
  EXPECT_EQ(r.findings[0].severity, Severity::kWarn);
  EXPECT_EQ(r.findings[0].evidence.size(), 2u);
  EXPECT_NE(r.verdict, Severity::kFail);
}

TEST(ExplainReport, TheFabricManagersVersionMismatchLine) {
  EXPECT_EQ(first_id("fabric manager NVIDIA GPU driver interface version 590.48.01 don't match "
                     "with driver version 580.126.09.\n"),
            "fabric-manager.version-mismatch");
}

// systemd's line for a fabric manager that did not start (NVIDIA/gpu-operator#544)
// names the fabric manager; with NV_WARN_NOTHING_TO_DO beside it, on a
// machine without NVSwitch (data-infra/cube-studio#29, two RTX 4090s), nothing.
TEST(ExplainReport, TheFabricManagersUnitFailing) {
  EXPECT_EQ(first_id("nvidia-fabricmanager.service: Control process exited, code=exited, "
                     "status=1/FAILURE\n"),
            "fabric-manager.not-running");
  Report r = explain(snapshot_from_text(
      "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: Detected Pre-NVL5 system\n"
      "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4756]: request to query NVSwitch "
      "device information from NVSwitch driver failed with error:WARNING Nothing to do "
      "[NV_WARN_NOTHING_TO_DO]\n"
      "Sep 18 03:19:01 ubuntu2404 nvidia-fabricmanager-start.sh[4753]: "
      "\"/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg\" failed! Exit "
      "code: 1\n"
      "Sep 18 03:19:01 ubuntu2404 systemd[1]: nvidia-fabricmanager.service: Control process "
      "exited, code=exited, status=1/FAILURE\n"));
  EXPECT_NE(r.verdict, Severity::kFail);
  for (const auto& f : r.findings) EXPECT_NE(f.id, "fabric-manager.not-running");
}

// The NVLink5 start script's and NVLSM's words for a missing ib_umad
// (spectrocloud/CanvOS#700, siderolabs/docs#581) name link 2 of the chain.
TEST(ExplainReport, TheNvlink5StartScriptWithoutIbUmad) {
  EXPECT_EQ(first_id("Detected NVL5+ system\n"
                     "Kernel module \"ib_umad\" has not been loaded, fabric manager cannot be "
                     "started\n"),
            "fabric.ib-modules-missing");
  EXPECT_EQ(first_id("nvlsm: ibwarn: [15] umad_init: can't read ABI version from "
                     "/sys/class/infiniband_mad/abi_version (No such file or directory): is "
                     "ib_umad module loaded?\n"),
            "fabric.ib-modules-missing");
}

TEST(ExplainReport, AnSelinuxDenialOfANode) {
  EXPECT_EQ(first_id("Failed to initialize NVML: Insufficient Permissions\n"
                     "type=AVC msg=audit(1764669600.123:512): avc:  denied  { read write } for  "
                     "pid=4242 comm=\"nvidia-smi\" name=\"nvidiactl\" dev=\"tmpfs\" ino=5 "
                     "scontext=system_u:system_r:container_t:s0:c380,c597 "
                     "tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file "
                     "permissive=0\n"),
            "devnodes.selinux-denied");
  // An AVC denial of something else is not about the GPU.
  Report other =
      explain(snapshot_from_text("type=AVC msg=audit(1.2:3): avc:  denied  { read } for  "
                                 "comm=\"httpd\" name=\"index.html\"\n"));
  EXPECT_EQ(find(other, "devnodes.selinux-denied"), nullptr);
}

TEST(ExplainReport, ADriverVersionInProseMeetsTheRegressionCatalog) {
  Report r = explain(snapshot_from_text(
      "There is some kind of CUDA incompatibility with NVIDIA driver 331.38.\n"
      "nothing happening for a while, and then the caffe process segfaulting.\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "driver.known-regression");
  EXPECT_EQ(r.findings[0].severity, Severity::kWarn);
  // The same build beside an error that does not look like it: not the cause.
  Report oom = explain(snapshot_from_text(
      "NVIDIA driver 331.38\nRuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"));
  const Finding* f = find(oom, "driver.known-regression");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kOk);
  // Numbers that are no driver version.
  for (const char* text : {"driver 12.4\n", "driver 5501.54\n", "driver version 535.\n",
                           "the driver is fine 550.54.14\n"}) {
    EXPECT_EQ(find(explain(snapshot_from_text(text)), "driver.known-regression"), nullptr) << text;
  }
}

TEST(ExplainReport, ANodeAdvertisingNoGpu) {
  Report r = explain(snapshot_from_text("Capacity:\n  nvidia.com/gpu:     0\n"));
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].id, "container.runtime-not-configured");
  EXPECT_TRUE(explain(snapshot_from_text("  nvidia.com/gpu:     1\n")).findings.empty());
}

TEST(ExplainParse, CudaErrorNamesAndNumbers) {
  Snapshot s = snapshot_from_text("cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY\n");
  EXPECT_EQ(s.cuda.runs.at(0).init_rc, 802);
  EXPECT_EQ(explain(s).findings.at(0).id, "fabric-manager.not-running");
  s = snapshot_from_text("error: cudaErrorStubLibrary\n");
  EXPECT_EQ(s.cuda.runs.at(0).cudart_rc, 34);
  s = snapshot_from_text("CUDA error 999 at main.cu:12\n");
  EXPECT_EQ(s.cuda.runs.at(0).cudart_rc, 999);
  s = snapshot_from_text(
      "node1:2201:2201 [0] include/alloc.h:103 NCCL WARN Cuda failure 'out of "
      "memory'\n");
  EXPECT_EQ(s.cuda.runs.at(0).cudart_rc, 2);
  EXPECT_EQ(s.reported.at(0).kind, "nccl");
}

TEST(ExplainParse, GarbageAndBinaryDoNotCrash) {
  std::string junk;
  for (int i = 0; i < 200000; ++i) junk += static_cast<char>((i * 7919) % 256);
  junk += std::string(100000, '|') + "\n" + std::string(50000, 'x');
  Snapshot s = snapshot_from_text(junk);
  Report r = explain(s);
  EXPECT_NE(r.verdict, Severity::kFail);
  Snapshot empty = snapshot_from_text("");
  EXPECT_EQ(empty.unobserved.size(), empty.probes.size());
}

TEST(RunChecks, SkipsChecksWithUnobservedNeeds) {
  Snapshot s;
  s.unobserved = {"driver"};
  std::vector<const CheckEntry*> all;
  for (const auto& c : all_checks()) all.push_back(&c);
  Report r = run_checks(s, Config{}, all);
  for (const auto& f : r.findings) {
    const CheckEntry* entry = nullptr;
    for (const auto& c : all_checks()) {
      if (f.check == c.name) entry = &c;
    }
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(std::count(entry->needs.begin(), entry->needs.end(), "driver"), 0) << f.check;
  }
  EXPECT_EQ(find(r, "driver.not-loaded"), nullptr);
}

TEST(Registry, EveryCheckNamesKnownNeeds) {
  const std::set<std::string> known = {"env",        "limits",   "driver",  "pci",  "devnodes",
                                       "container",  "services", "fabric",  "nvml", "cuda",
                                       "kernel-log", "reported", "workload"};
  for (const auto& c : all_checks()) {
    EXPECT_FALSE(c.needs.empty()) << c.name;
    for (const auto& n : c.needs) EXPECT_EQ(known.count(n), 1u) << c.name << ": " << n;
  }
}

}  // namespace
}  // namespace gd
