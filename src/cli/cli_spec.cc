#include "cli/cli_spec.h"

#include <string>

namespace gd {
namespace {

nlohmann::json option_spec(const CLI::Option& o) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& s : o.get_snames()) names.push_back("-" + s);
  for (const auto& l : o.get_lnames()) names.push_back("--" + l);
  const bool positional = names.empty();
  if (positional) names.push_back(o.get_name());
  std::string value;
  if (o.get_expected_max() != 0 || positional) {
    value = o.get_option_text().empty() ? o.get_type_name() : o.get_option_text();
  }
  return {{"names", names},
          {"help", o.get_description()},
          {"value", value},
          {"positional", positional},
          {"repeatable", o.get_expected_max() > 1 ||
                             o.get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll}};
}

nlohmann::json options_of(const CLI::App& app) {
  nlohmann::json out = nlohmann::json::array();
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_group().empty()) continue;  // hidden
    out.push_back(option_spec(*o));
  }
  return out;
}

}  // namespace

nlohmann::json cli_spec(const CLI::App& app, const std::string& version,
                        const std::map<std::string, std::string>& summaries) {
  nlohmann::json commands = nlohmann::json::array();
  for (const CLI::App* sub : app.get_subcommands({})) {
    auto summary = summaries.find(sub->get_name());
    commands.push_back({{"name", sub->get_name()},
                        {"summary", summary == summaries.end() ? "" : summary->second},
                        {"help", sub->get_description()},
                        {"footer", sub->get_footer()},
                        {"options", options_of(*sub)}});
  }
  return {{"schema", "gpudoctor.cli/v1"},   {"name", app.get_name()},
          {"about", app.get_description()}, {"version", version},
          {"options", options_of(app)},     {"commands", commands}};
}

}  // namespace gd
