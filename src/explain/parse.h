// Internal to explain: the line parsers that turn pasted text into snapshot
// fields. Each parser looks at one line at a time (plus what earlier lines
// left in TextParse) and records what it understood; none backtracks, so the
// whole parse is linear in the input.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "explain/error_codes.h"
#include "snapshot/snapshot.h"
#include "util/text.h"  // trim

namespace gd {

// Lines longer than this are cut before matching: no real error line is
// longer, and it keeps binary junk from costing more than it weighs.
inline constexpr size_t kMaxLineChars = 4096;

struct TextParse {
  Snapshot* s = nullptr;
  std::set<std::string> observed;  // probe names the text said something about
  // nvidia-smi table state: the GPU whose row continues on the next lines.
  int smi_row = -1;            // index into s->nvml.gpus of the row being read, -1 none
  int smi_row_line = 0;        // which line of the 3-line row comes next (1, 2)
  bool smi_processes = false;  // inside the "Processes:" table
  // nvidia-smi -q state: the GPU whose block is being read (index into
  // s->nvml.gpus, -1 none), the section heading above the current line
  // ("FB Memory Usage"), and the process whose rows come next (-1 none).
  int smi_q_gpu = -1;
  std::string smi_q_section;
  int smi_q_process = -1;
  // A "Fabric" block pasted on its own (nvidia-smi -q | grep -A5 Fabric):
  // its lines belong to a GPU of their own until a line at its indent.
  int smi_q_fabric_indent = -1;
  // The last command line seen ("$ nvidia-smi", ">>> import torch"), to tell
  // whose crash a "Segmentation fault" is.
  std::string last_command;
  // The previous line asked torch.cuda.is_available(); a REPL prints the
  // answer on the next one.
  bool asked_is_available = false;
  // Lines recorded as "error-line" so far (parse_error_line bounds them).
  int error_lines = 0;
  // The error code the current line names (code_on_line), asked once per line.
  int code_line_no = 0;
  std::optional<CodeMention> code;
};

// The code a line names (explain/error_codes.h), found once per line and
// shared by the parsers that read codes.
const std::optional<CodeMention>& code_on_line(std::string_view line, std::string_view lowered,
                                               int line_no, TextParse* p);

// Adds a reported line (kind, code, text) with its line number.
void add_reported(TextParse* p, std::string kind, int code, std::string text, std::string_view line,
                  int line_no);

bool icontains(std::string_view lowered_haystack, std::string_view lowered_needle);

// Pasted text as the parsers read it: UTF-16 (a Windows terminal's or
// PowerShell's redirect, with or without its byte-order mark) becomes its
// ASCII characters ('?' for the others), a UTF-8 byte-order mark goes,
// terminal colour and cursor sequences (ESC [ ... and ESC ] ... BEL) go, and
// a lone carriage return (a progress bar redrawing its line) ends a line.
std::string plain_text(std::string_view raw);

// Each returns true when it understood the line (the next parsers still run;
// a line can carry several signals).
bool parse_cuda_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p);
bool parse_nvml_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p);
bool parse_smi_table_line(std::string_view line, int line_no, TextParse* p);
bool parse_smi_query_line(std::string_view line, TextParse* p);
bool parse_container_line(std::string_view line, std::string_view lowered, int line_no,
                          TextParse* p);
bool parse_env_line(std::string_view line, int line_no, TextParse* p);
// A line that shows an error of any kind ("error-line"), and the symptoms
// with a family of causes: nvidia-smi's ERR! ("smi-err"), NCCL's watchdog
// ("nccl-watchdog"), an OOM in which this process holds the GPU
// ("oom-own-process").
bool parse_error_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p);
bool parse_hint_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p);
// A line of the phrase table, reported as kind "phrase:<signal>".
inline constexpr std::string_view kPhraseKindPrefix = "phrase:";
bool parse_phrase_line(std::string_view line, std::string_view lowered, int line_no, TextParse* p);
// A component of the stack (catalog/components.h) named on a line that says
// something failed, reported as kind "component:<key>".
inline constexpr std::string_view kComponentKindPrefix = "component:";
bool parse_component_line(std::string_view line, std::string_view lowered, int line_no,
                          TextParse* p);
// After the line parsers: when the text names a driver build with a known
// regression (catalog/driver_regressions.h), its lines that show a
// regression's words, as reported kind "regression-words", so the
// driver-regression check can tell that symptom from others. A second pass,
// taken only then: most pastes name no such build.
void add_regression_lines(std::string_view text, TextParse* p);

// Shared by the nvidia-smi parsers (parse_nvml.cc, parse_smi_query.cc).
// "00000000:41:00.0" / "0000:41:00.0" / "41:00.0" inside s -> "0000:41:00.0"; "" if none.
std::string find_bus_id(std::string_view s);
// The decimal number s starts with; -1 when it starts with no digit.
int leading_number(std::string_view s);
// The C identifier starting at `pos` ("cuCtxCreate_v4", "CUDA_ERROR_NO_DEVICE"); "" if none.
std::string_view ident_at(std::string_view s, size_t pos);
bool is_ident_char(char c);
// "23000MiB" -> bytes; nullopt if not that shape.
std::optional<uint64_t> mib_bytes(std::string_view t);
NvmlGpu* gpu_by_index(NvmlInfo& n, uint32_t index);
// device_count = the GPUs the text listed.
void set_device_count(NvmlInfo& n);

// The CUDA run "user" the text describes, created on first use.
CudaRun& text_cuda_run(TextParse* p);
// Marks NVML as seen in the text.
NvmlInfo& text_nvml(TextParse* p);

}  // namespace gd
