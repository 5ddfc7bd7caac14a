// The command tree as data: every command, its options and positionals,
// from the same CLI11 setup that parses them. `gpudoctor __cli-spec` prints
// it; scripts/cli_docs.py turns it into man pages and shell completion, and
// tests/cli/interface_test.py checks one name per meaning across commands.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace gd {

inline constexpr const char* kCliSpecMode = "__cli-spec";

// {"schema": "gpudoctor.cli/v1", "name", "about", "version", "options": [...],
//  "commands": [{"name", "summary", "help", "footer", "options": [...]}]}
// (summary: the one line of `gpudoctor --help`; help: the command's own)
// where an option is {"names": ["-o", "--output"], "help", "value" ("" for a
// flag), "positional", "repeatable"}.
nlohmann::json cli_spec(const CLI::App& app, const std::string& version,
                        const std::map<std::string, std::string>& summaries);

}  // namespace gd
