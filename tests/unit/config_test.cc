// Tests of the config file (src/config): values, per-model sections and
// thresholds_for's matching, and one test per kind of error, each naming
// the file, the line and the key.
#include "config/config.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "checks/check.h"

namespace gd {
namespace {

// A config file in a fresh temporary directory, removed afterwards.
class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gd-config-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/gpudoctor.toml";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string& text) {
    std::ofstream(path_) << text;
    return path_;
  }
  // The error of loading `text`, "" when it loaded.
  std::string error_of(const std::string& text) {
    auto c = load_config(write(text));
    return c.ok() ? "" : c.error();
  }
  std::string dir_;
  std::string path_;
};

TEST_F(ConfigFile, NoPathIsTheDefaults) {
  auto c = load_config("");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->health.gpu_margin_c, 5);
  EXPECT_EQ(c->health.gpu_warn_c, 0);
  EXPECT_EQ(c->health.pending, ConfigSeverity::kWarn);
  EXPECT_EQ(c->health.power_brake, ConfigSeverity::kFail);
  EXPECT_EQ(c->health.retired_pages_fail, 63u);
  EXPECT_EQ(c->pcie_load_utilization_pct, 50);
  EXPECT_TRUE(c->models.empty());
  EXPECT_EQ(c->source, "");
}

TEST_F(ConfigFile, EveryKeyIsRead) {
  auto c = load_config(write(R"(# every key
[thermal]
gpu_margin_c = 3
gpu_warn_c = 80
gpu_fail_c = 88
memory_margin_c = 4
memory_warn_c = 85
memory_fail_c = 92

[power]
limit_info_pct = 60
brake = "warn"

[clocks]
hw_thermal = "warn"
hw_slowdown = "info"
sw_thermal = "fail"

[ecc]
uncorrected_fail = 2
corrected_warn = 10000
retired_pages_fail = 60
pending = "fail"

[pcie]
load_utilization_pct = 30
corrected_warn_count = 5
)"));
  ASSERT_TRUE(c.ok()) << c.error();
  const HealthThresholds& t = c->health;
  EXPECT_EQ(t.gpu_margin_c, 3);
  EXPECT_EQ(t.gpu_warn_c, 80);
  EXPECT_EQ(t.gpu_fail_c, 88);
  EXPECT_EQ(t.memory_margin_c, 4);
  EXPECT_EQ(t.memory_warn_c, 85);
  EXPECT_EQ(t.memory_fail_c, 92);
  EXPECT_EQ(t.power_limit_info_pct, 60);
  EXPECT_EQ(t.power_brake, ConfigSeverity::kWarn);
  EXPECT_EQ(t.hw_thermal, ConfigSeverity::kWarn);
  EXPECT_EQ(t.hw_slowdown, ConfigSeverity::kInfo);
  EXPECT_EQ(t.sw_thermal, ConfigSeverity::kFail);
  EXPECT_EQ(t.ecc_uncorrected_fail, 2u);
  EXPECT_EQ(t.ecc_corrected_warn, 10000u);
  EXPECT_EQ(t.retired_pages_fail, 60u);
  EXPECT_EQ(t.pending, ConfigSeverity::kFail);
  EXPECT_EQ(c->pcie_load_utilization_pct, 30);
  EXPECT_EQ(c->pcie_corrected_warn_count, 5);
  EXPECT_EQ(c->source, path_);
  // Keys the file leaves out keep their defaults.
  EXPECT_EQ(c->memory_held_fraction, Config{}.memory_held_fraction);
}

TEST_F(ConfigFile, ModelSectionsStartFromTheTopLevelValues) {
  // The model section comes first in the file: order does not matter.
  auto c = load_config(write(R"([model."RTX 4090"]
thermal.gpu_warn_c = 83

[model."H100"]
[model."H100".ecc]
pending = "fail"

[thermal]
gpu_margin_c = 7
)"));
  ASSERT_TRUE(c.ok()) << c.error();
  ASSERT_EQ(c->models.size(), 2u);
  const HealthThresholds& geforce = thresholds_for(*c, "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(geforce.gpu_warn_c, 83);
  EXPECT_EQ(geforce.gpu_margin_c, 7);  // inherited from [thermal]
  EXPECT_EQ(geforce.pending, ConfigSeverity::kWarn);
  const HealthThresholds& h100 = thresholds_for(*c, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.pending, ConfigSeverity::kFail);
  EXPECT_EQ(h100.gpu_warn_c, 0);
  EXPECT_EQ(h100.gpu_margin_c, 7);
  // No match, or no name: the top level.
  EXPECT_EQ(&thresholds_for(*c, "NVIDIA A100-SXM4-80GB"), &c->health);
  EXPECT_EQ(&thresholds_for(*c, ""), &c->health);
}

TEST_F(ConfigFile, MatchingIgnoresCaseAndTheLongestTextWins) {
  auto c = parse_config(R"([model."rtx"]
thermal.gpu_warn_c = 70
[model."RTX 4090"]
thermal.gpu_warn_c = 80
[model."4090 D"]
thermal.gpu_warn_c = 81
[model."GeForce RTX 4090 D"]
thermal.gpu_warn_c = 82
)",
                        "x.toml");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(thresholds_for(*c, "NVIDIA GeForce RTX 3090").gpu_warn_c, 70);
  EXPECT_EQ(thresholds_for(*c, "NVIDIA GEFORCE RTX 4090").gpu_warn_c, 80);
  EXPECT_EQ(thresholds_for(*c, "NVIDIA GeForce RTX 4090 D").gpu_warn_c, 82);
  // Equal lengths: the first in byte order.
  auto tie = parse_config(
      "[model.\"abc\"]\nthermal.gpu_warn_c = 71\n"
      "[model.\"xyz\"]\nthermal.gpu_warn_c = 72\n",
      "t.toml");
  ASSERT_TRUE(tie.ok());
  EXPECT_EQ(thresholds_for(*tie, "xyz abc").gpu_warn_c, 71);
}

TEST_F(ConfigFile, UnknownTopLevelKey) {
  EXPECT_EQ(error_of("\n[thermals]\ngpu_margin_c = 5\n"),
            path_ +
                ":2: thermals: unknown key (known tables: thermal, power, clocks, ecc, pcie, "
                "checks, model)");
}

TEST_F(ConfigFile, UnknownKeyInSectionNamesLineAndKey) {
  std::string e = error_of("[thermal]\ngpu_margin_c = 5\ngpu_margn_c = 3\n");
  EXPECT_EQ(e, path_ +
                   ":3: thermal.gpu_margn_c: unknown key (known: gpu_margin_c, gpu_warn_c, "
                   "gpu_fail_c, memory_margin_c, memory_warn_c, memory_fail_c)");
}

TEST_F(ConfigFile, WrongTypes) {
  EXPECT_EQ(error_of("[thermal]\ngpu_warn_c = \"85\"\n"),
            path_ + ":2: thermal.gpu_warn_c: expected an integer, got a string");
  EXPECT_EQ(error_of("[thermal]\ngpu_warn_c = 85.0\n"),
            path_ +
                ":2: thermal.gpu_warn_c: expected an integer, got a floating-point number "
                "(write 85, not 85.0)");
  EXPECT_EQ(error_of("thermal = 3\n"),
            path_ + ":1: thermal: expected a table ([thermal]), got an integer");
  EXPECT_EQ(error_of("[ecc]\npending = true\n"),
            path_ + ":2: ecc.pending: expected \"info\", \"warn\" or \"fail\", got a boolean");
}

TEST_F(ConfigFile, OutOfRangeAndBadSeverity) {
  EXPECT_EQ(error_of("[power]\nlimit_info_pct = 120\n"),
            path_ + ":2: power.limit_info_pct: 120 is out of range (0..100)");
  EXPECT_EQ(error_of("[ecc]\nuncorrected_fail = 0\n"),
            path_ + ":2: ecc.uncorrected_fail: 0 is out of range (1..1000000000)");
  EXPECT_EQ(error_of("[thermal]\ngpu_margin_c = -1\n"),
            path_ + ":2: thermal.gpu_margin_c: -1 is out of range (0..50)");
  EXPECT_EQ(error_of("[clocks]\nhw_thermal = \"error\"\n"),
            path_ +
                ":2: clocks.hw_thermal: expected \"info\", \"warn\" or \"fail\", got "
                "\"error\"");
  EXPECT_EQ(error_of("[pcie]\nload_utilization_pct = 101\n"),
            path_ + ":2: pcie.load_utilization_pct: 101 is out of range (0..100)");
}

TEST_F(ConfigFile, ModelSectionErrors) {
  EXPECT_EQ(error_of("[model.\"RTX 4090\"]\npcie.load_utilization_pct = 10\n"),
            path_ +
                ":2: model.\"RTX 4090\".pcie: not per model; set it in [pcie] at the top "
                "level");
  EXPECT_EQ(error_of("[model.\"RTX 4090\"]\nthermal.gpu_wran_c = 10\n"),
            path_ +
                ":2: model.\"RTX 4090\".thermal.gpu_wran_c: unknown key (known: "
                "gpu_margin_c, gpu_warn_c, gpu_fail_c, memory_margin_c, memory_warn_c, "
                "memory_fail_c)");
  EXPECT_EQ(error_of("[model.\"RTX 4090\"]\nfans = 3\n"),
            path_ +
                ":2: model.\"RTX 4090\".fans: unknown key (known: thermal, power, clocks, "
                "ecc)");
  EXPECT_EQ(error_of("[model]\nh100 = 3\n"),
            path_ + ":2: model.\"h100\": expected a table, got an integer");
  EXPECT_EQ(error_of("model = 3\n"),
            path_ + ":1: model: expected tables like [model.\"RTX 4090\"], got an integer");
  EXPECT_EQ(error_of("[model.\"\"]\nthermal.gpu_warn_c = 80\n"),
            path_ + ":1: model.\"\": empty model text would match every GPU");
  std::string dup = error_of(
      "[model.\"RTX 4090\"]\nthermal.gpu_warn_c = 80\n[model.\"rtx 4090\"]\nthermal.gpu_warn_c = "
      "81\n");
  EXPECT_NE(dup.find("the same text as another model section (matching ignores case)"),
            std::string::npos)
      << dup;
}

// TOML escapes turn into control bytes in a key or a value; the error
// quotes them escaped, so it stays one line (found by fuzz_config).
TEST_F(ConfigFile, EscapesInKeysAndValuesStayOnOneLine) {
  EXPECT_EQ(error_of("[clocks]\nhw_thermal = \"war\\n\"\n"),
            path_ +
                ":2: clocks.hw_thermal: expected \"info\", \"warn\" or \"fail\", got "
                "\"war\\x0a\"");
  std::string key = error_of("[thermal]\n\"gpu\\r\\nwarn\" = 5\n");
  EXPECT_EQ(key.find('\n'), std::string::npos) << key;
  EXPECT_EQ(key.find('\r'), std::string::npos) << key;
  EXPECT_NE(key.find("thermal.\"gpu\\x0d\\x0awarn\": unknown key"), std::string::npos) << key;
}

TEST_F(ConfigFile, SyntaxErrorNamesLineAndColumn) {
  std::string e = error_of("[thermal]\ngpu_warn_c = = 5\n");
  EXPECT_EQ(e.rfind(path_ + ":2:", 0), 0u) << e;
}

TEST_F(ConfigFile, SeveralProblemsReportTheFirstByLine) {
  std::string e = error_of("[thermal]\ngpu_warn_c = 500\n[power]\nbreak = \"warn\"\n");
  EXPECT_EQ(e, path_ + ":2: thermal.gpu_warn_c: 500 is out of range (0..150) (and 1 more)");
}

TEST_F(ConfigFile, UnreadableFiles) {
  auto missing = load_config(dir_ + "/nope.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            dir_ + "/nope.toml: cannot read the config file: No such file or directory");
  auto directory = load_config(dir_);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error(), dir_ + ": cannot read the config file: Is a directory");
}

// Read with a cap checked while reading (util/read_file.h): /dev/zero and a
// 2 MiB file are refused with the cap in the error, not read into memory.
TEST_F(ConfigFile, SizeCapIsCheckedWhileReading) {
  auto zero = load_config("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error(), "/dev/zero: cannot read the config file: over the 1 MiB limit");
  std::string big = "# " + std::string(2 << 20, 'x') + "\n";
  EXPECT_EQ(error_of(big), path_ + ": cannot read the config file: over the 1 MiB limit");
  // The same cap for text handed to parse_config directly.
  auto text = parse_config(big, "big.toml");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error(), "big.toml: over the 1 MiB limit for a config file");
}

std::string dotted(int parts) {
  std::string key = "a";
  for (int i = 1; i < parts; ++i) key += ".a";
  return key;
}

// toml++ recurses once per part of a dotted key: 100,000 parts overflowed
// the stack. The depth is checked on the text before toml++ sees it.
TEST_F(ConfigFile, DeepKeysAreRefusedBeforeTheTomlParser) {
  const std::string deep = ":2: keys or values nest deeper than 32 levels (the limit)";
  EXPECT_EQ(error_of("[thermal]\n" + dotted(100000) + " = 1\n"), path_ + deep);
  EXPECT_EQ(error_of("# x\n[" + dotted(100000) + "]\n"), path_ + deep);
  EXPECT_EQ(error_of("\nx = " + std::string(100000, '[') + "\n"), path_ + deep);
  EXPECT_EQ(error_of("\nx = " + std::string(50000, '{') + "\n"), path_ + deep);
  // {a = {a = ...}} nests one level per brace and dot together.
  std::string inline_tables;
  for (int i = 0; i < 40; ++i) inline_tables += "a.b = {";
  EXPECT_EQ(error_of("\n" + inline_tables + "\n"), path_ + deep);
  // 32 parts reach toml++ (an unknown key), 33 do not.
  EXPECT_EQ(error_of("\n" + dotted(32) + " = 1\n").find("deeper"), std::string::npos);
  EXPECT_EQ(error_of("\n" + dotted(33) + " = 1\n"), path_ + deep);
}

// Dots in strings and comments, and floats, are not key parts.
TEST_F(ConfigFile, DotsInStringsAndCommentsAreNotDepth) {
  std::string dots(200, '.');
  std::string text = "# " + dots + "\n[model.\"RTX" + dots + "\"]\nthermal.gpu_warn_c = 83\n" +
                     "[model.'A" + dots + "']\nthermal.gpu_warn_c = 84 # " + dots + "\n";
  auto c = load_config(write(text));
  ASSERT_TRUE(c.ok()) << c.error();
  ASSERT_EQ(c->models.size(), 2u);
  std::vector<std::string> matches = {c->models[0].match, c->models[1].match};
  std::sort(matches.begin(), matches.end());
  EXPECT_EQ(matches, (std::vector<std::string>{"A" + dots, "RTX" + dots}));
  // A multi-line string spans lines: the depth error names the right line.
  std::string after = "x = \"\"\"" + dots + "\n" + dots + "\"\"\"\n" + dotted(40) + " = 1\n";
  EXPECT_EQ(error_of(after), path_ + ":3: keys or values nest deeper than 32 levels (the limit)");
}

TEST(ConfigPath, FlagThenEnvironmentThenNothing) {
  EXPECT_EQ(config_path("a.toml", "b.toml"), "a.toml");
  EXPECT_EQ(config_path("", "b.toml"), "b.toml");
  EXPECT_EQ(config_path("", nullptr), "");
}

// The example the docs point to is a valid file.
TEST(ConfigExample, DocsExampleLoads) {
  auto c = load_config(std::string(GD_SOURCE_DIR) + "/docs/gpudoctor.example.toml");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_FALSE(c->models.empty());
}

// The CLI refuses a bad file with exit 64 and the one-line error.
TEST_F(ConfigFile, CheckExitsWithUsageErrorOnBadConfig) {
  std::string path = write("[thermal]\ngpu_margn_c = 3\n");
  std::string cmd = std::string(GD_BINARY) + " check --from /dev/null --config " + path + " 2>" +
                    dir_ + "/err.txt";
  int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 64);
  std::ifstream err(dir_ + "/err.txt");
  std::string line;
  std::getline(err, line);
  EXPECT_EQ(line, "gpudoctor: " + path +
                      ":2: thermal.gpu_margn_c: unknown key (known: "
                      "gpu_margin_c, gpu_warn_c, gpu_fail_c, memory_margin_c, "
                      "memory_warn_c, memory_fail_c)");
  std::remove((dir_ + "/err.txt").c_str());
}

}  // namespace
}  // namespace gd
