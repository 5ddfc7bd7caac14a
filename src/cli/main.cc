// gpudoctor: why CUDA will not start, and what to type to fix it.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_spec.h"
#include "cli/commands.h"
#include "util/suggest.h"

namespace {

// " (did you mean '--json'?)" for the first flag the command does not know
// that is one typo away from one it does; "" otherwise.
std::string flag_hint(const CLI::App& app, int argc, char** argv) {
  if (argc < 3) return "";
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands({})) {
    if (s->get_name() == argv[1]) sub = s;
  }
  if (sub == nullptr) return "";
  std::vector<std::string> flags;
  for (const CLI::Option* o : sub->get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    for (const auto& l : o->get_lnames()) flags.push_back("--" + l);
  }
  for (int i = 2; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (!a.starts_with("--")) continue;
    std::string flag(a.substr(0, a.find('=')));
    if (std::find(flags.begin(), flags.end(), flag) != flags.end()) continue;
    std::string near = gd::nearest_name(flag, flags);
    if (!near.empty()) return " (did you mean '" + near + "'?)";
  }
  return "";
}

constexpr const char* kAbout =
    "gpudoctor — diagnoses why CUDA will not start (or starts wrong) on this machine";

int gpudoctor_main(int argc, char** argv) {
  if (gd::is_probe_child(argc, argv)) return gd::run_probe_child(argc, argv);
#ifndef GD_SERVE_BINARY
  // The exporter is its own binary (CMakeLists.txt says why); `serve` and
  // its --help are answered there.
  if (argc >= 2 && std::string_view(argv[1]) == "serve") return gd::exec_serve_binary(argv);
#else
  // Started by hand (`gpudoctor-serve --help`, `gpudoctor-serve --listen
  // :9835`), the binary is `gpudoctor serve`: the subcommand is implied.
  std::vector<char*> with_serve;
  if (argc < 2 || std::string_view(argv[1]) != "serve") {
    static char serve_word[] = "serve";
    with_serve.assign(argv, argv + argc);
    with_serve.insert(with_serve.begin() + 1, serve_word);
    with_serve.push_back(nullptr);
    argv = with_serve.data();
    argc += 1;
  }
#endif

  CLI::App app{kAbout, "gpudoctor"};
  app.set_version_flag("--version", std::string("gpudoctor ") + GD_VERSION);
  app.require_subcommand(1);

  gd::ServeArgs serve;
#ifndef GD_SERVE_BINARY
  gd::CheckArgs check;
  gd::SnapshotArgs snapshot;
  gd::LogsArgs logs;
  gd::ExplainArgs explain;
  gd::TopoArgs topo;
  gd::EnvArgs env;
  gd::RunArgs run;
  gd::HistoryArgs history;
  gd::LabelsArgs labels;
  gd::DiffArgs diff;
  gd::DiagArgs diag;
#endif
  // The table of subcommands.
  struct Command {
    const char* name;
    const char* help;
    std::function<void(CLI::App*)> setup;
    std::function<int()> run;
  };
  // The exporter's binary knows its own command only: the others' option
  // setup would be code its start runs and keeps resident for nothing
  // (bench/serve_scrape.txt).
  const Command kCommands[] = {
#ifndef GD_SERVE_BINARY
      {"check", "Name the root cause when CUDA will not start, with evidence and the fix",
       [&](CLI::App* a) { gd::setup_check(a, &check); }, [&] { return gd::run_check(check); }},
      {"snapshot", "Record this machine as a gpudoctor.snapshot/v1 JSON file",
       [&](CLI::App* a) { gd::setup_snapshot(a, &snapshot); },
       [&] { return gd::run_snapshot(snapshot); }},
      {"logs", "Decode NVIDIA events (Xid, NVRM, AER, SXid) in the kernel log",
       [&](CLI::App* a) { gd::setup_logs(a, &logs); }, [&] { return gd::run_logs(logs); }},
      {"explain", "Name the likely causes behind pasted error output or logs",
       [&](CLI::App* a) { gd::setup_explain(a, &explain); },
       [&] { return gd::run_explain(explain); }},
      {"topo", "Map CUDA order to nvidia-smi/PCI order, NUMA nodes, CPUs and GPU-to-GPU paths",
       [&](CLI::App* a) { gd::setup_topo(a, &topo); }, [&] { return gd::run_topo(topo); }},
      {"env", "Print the environment this machine's jobs need (sh, fish, docker, k8s)",
       [&](CLI::App* a) { gd::setup_env(a, &env); }, [&] { return gd::run_env(env); }},
      {"run", "Check first, then run a command on the healthy GPUs with the right settings",
       [&](CLI::App* a) { gd::setup_run(a, &run); }, [&] { return gd::run_run(run); }},
#endif
      {"serve", "Export GPU health to Prometheus, keep a history, serve a status page",
       [&](CLI::App* a) { gd::setup_serve(a, &serve); },
#ifdef GD_SERVE_BINARY
       [&] { return gd::run_serve(serve); }},
#else
       [] { return gd::kExitInternal; }},  // exec'd above
#endif
#ifndef GD_SERVE_BINARY
      {"history", "Past reports and kernel events from the history database",
       [&](CLI::App* a) { gd::setup_history(a, &history); },
       [&] { return gd::run_history(history); }},
      {"labels", "Write Node Feature Discovery labels (GPU model, count, driver, CUDA, health)",
       [&](CLI::App* a) { gd::setup_labels(a, &labels); }, [&] { return gd::run_labels(labels); }},
      {"diff", "Compare snapshots of nodes that should be identical; name the odd one out",
       [&](CLI::App* a) { gd::setup_diff(a, &diff); }, [&] { return gd::run_diff(diff); }},
      {"diag", "Test the GPUs under load: compute, memory, links, NCCL scaling",
       [&](CLI::App* a) { gd::setup_diag(a, &diag); }, [&] { return gd::run_diag(diag); }},
#endif
  };
  // Only the command being run has its options set up (all of them for the
  // top-level --help, --version and errors): building every command's
  // options and validators took longer than some commands' own work
  // (bench/logs_scan.txt).
  const bool one =
      argc >= 2 && std::any_of(std::begin(kCommands), std::end(kCommands), [&](const Command& c) {
        return c.name == std::string_view(argv[1]);
      });
  std::vector<std::pair<CLI::App*, const Command*>> subs;
  for (const Command& c : kCommands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    if (!one || c.name == std::string_view(argv[1])) c.setup(sub);
    subs.emplace_back(sub, &c);
  }

  if (argc == 2 && std::string_view(argv[1]) == gd::kCliSpecMode) {
    std::map<std::string, std::string> summaries;
    for (const Command& c : kCommands) summaries[c.name] = c.help;
    std::printf("%s\n", gd::cli_spec(app, GD_VERSION, summaries).dump(2).c_str());
    return 0;
  }
  std::string names;
  std::vector<std::string> name_list;
  bool known = false;
  for (const Command& c : kCommands) {
    names += std::string(names.empty() ? "" : ", ") + c.name;
    name_list.emplace_back(c.name);
    known = known || (argc >= 2 && c.name == std::string_view(argv[1]));
  }
  if (argc >= 2 && argv[1][0] != '-' && !known) {
    std::string near = gd::nearest_name(argv[1], name_list);
    gd::print_error(
        std::string("unknown command '") + argv[1] + "'" +
        (near.empty() ? " (commands: " + names + ")" : " (did you mean '" + near + "'?)"));
    return gd::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    bool run_without_dashes = argc >= 2 && std::string_view(argv[1]) == "run" &&
                              std::none_of(argv + 2, argv + argc, [](const char* a) {
                                return std::string_view(a) == "--";
                              });
    if (run_without_dashes) {
      gd::print_error(std::string(e.what()) +
                      " (put -- before the command: gpudoctor run [options] -- CMD ARGS...)");
      return gd::kExitUsage;
    }
    gd::print_error(std::string(e.what()) + flag_hint(app, argc, argv) + " (see gpudoctor --help)");
    return gd::kExitUsage;
  }
  for (const auto& [sub, cmd] : subs) {
    if (sub->parsed()) return cmd->run();
  }
  return gd::kExitUsage;
}

// Say why in one line, never "terminate called after throwing": the one place
// an escaped exception is caught (modules return Result<T>), with exit 3.
std::string one_line(std::string what) {
  for (char& c : what) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return what.size() > 300 ? what.substr(0, 300) + "..." : what;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return gpudoctor_main(argc, argv);
  } catch (const std::bad_alloc&) {
    gd::print_error("out of memory");
  } catch (const std::exception& e) {
    gd::print_error("internal error: " + one_line(e.what()));
  } catch (...) {
    gd::print_error("internal error: an unknown exception");
  }
  return gd::kExitInternal;
}
