// The small helpers of src/util that replaced per-file copies: where two
// copies had different rules, both rules are pinned here side by side.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "util/ascii.h"
#include "util/bytes.h"
#include "util/exe.h"
#include "util/fd.h"
#include "util/text.h"
#include "util/time.h"

namespace gd {
namespace {

TEST(UtilAscii, CaseHelpersTouchOnlyAsciiLetters) {
  EXPECT_EQ(ascii_lower("GPU-AbC\xC3\x89-0"), "gpu-abc\xC3\x89-0");
  EXPECT_EQ(ascii_upper("nvml_Error"), "NVML_ERROR");
  EXPECT_EQ(ascii_lower('Q'), 'q');
  EXPECT_EQ(ascii_upper('q'), 'Q');
  EXPECT_EQ(ascii_lower('\xC9'), '\xC9');
  EXPECT_TRUE(iequals("NVML_ERROR_UNKNOWN", "nvml_error_unknown"));
  EXPECT_FALSE(iequals("abc", "abcd"));
  EXPECT_TRUE(contains_nocase("NVIDIA H100 80GB HBM3", "h100"));
  EXPECT_FALSE(contains_nocase("NVIDIA H100", ""));
  EXPECT_FALSE(contains_nocase("H1", "h100"));
}

TEST(UtilText, TrimRules) {
  EXPECT_EQ(trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(trim("\va\f"), "\va\f");  // only spaces, tabs, CR, LF
  EXPECT_EQ(trim_isspace("\v\f a \r\n\t"), "a");
  EXPECT_EQ(trim_isspace(" \t "), "");
  EXPECT_EQ(trim_spaces_tabs_trailing_cr(" \ta b\t \r"), "a b");
  EXPECT_EQ(trim_spaces_tabs_trailing_cr("\ra\r"), "\ra");  // a leading CR stays
  EXPECT_EQ(trim_spaces_tabs_trailing_cr("a\n"), "a\n");
}

TEST(UtilText, SplitKeepsOrDropsEmptyParts) {
  EXPECT_EQ(split_strings("a,,b,", ','), (std::vector<std::string>{"a", "", "b", ""}));
  EXPECT_EQ(split_strings("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(split_strings_nonempty("a,,b,", ','), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_strings_nonempty("", ',').empty());
}

TEST(UtilText, JoinRules) {
  std::vector<std::string> v = {"", "a", "", "b"};
  EXPECT_EQ(join(v, ","), ",a,,b");
  EXPECT_EQ(join_skip_leading_empty(v, ","), "a,,b");
  EXPECT_EQ(join(std::vector<std::string>{}, ", "), "");
  std::set<std::string> s = {"", "x", "y"};
  EXPECT_EQ(join(s, "; "), "; x; y");
  EXPECT_EQ(join_skip_leading_empty(s, "; "), "x; y");
}

TEST(UtilText, PrintableRules) {
  const std::string raw = std::string("a\"b\tc\x1b") + "\xC3\xA9";
  EXPECT_EQ(printable(raw), "a\"b c\\x1b\\xc3\\xa9");
  EXPECT_EQ(printable_or_question_mark(raw), "a\"b?c???");
  EXPECT_EQ(controls_to_question_mark(raw), "a\"b?c?\xC3\xA9");
  EXPECT_EQ(printable_unquoted_or_underscore(raw, 64), "a_b_c___");
  EXPECT_EQ(printable_unquoted_or_underscore("abcdef", 3), "abc");
}

TEST(UtilBytes, ThreeRules) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(uint64_t{24} << 30), "24.0 GiB");
  EXPECT_EQ(format_bytes_whole_if_round(100), "100 bytes");
  EXPECT_EQ(format_bytes_whole_if_round(1048576), "1 MiB");
  EXPECT_EQ(format_bytes_whole_if_round(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes_whole_if_round(150754820096.0), "140.4 GiB");
  EXPECT_EQ(format_bytes_exact(size_t{16} << 20), "16 MiB");
  EXPECT_EQ(format_bytes_exact(1536 * 1024), "1536 KiB");
  EXPECT_EQ(format_bytes_exact(16 * 1024), "16 KiB");
  EXPECT_EQ(format_bytes_exact(1000), "1000 B");
}

TEST(UtilTime, Formats) {
  EXPECT_EQ(iso_time_us(uint64_t{1764669601} * 1000000 + 123456),
            "2025-12-02T10:00:01.123456+00:00");
  EXPECT_EQ(utc_datetime_text(1764669601), "2025-12-02 10:00:01 UTC");
  EXPECT_EQ(utc_year(1764669601), 2025);
  EXPECT_EQ(utc_year(0), 1970);
  EXPECT_EQ(local_datetime_text(1764669601).size(), 19u);
  EXPECT_EQ(seconds_1dp(12.345), "12.3");
}

TEST(UtilExe, FindOnPathSkipsRelativeAndEmptyEntriesAndNonExecutables) {
  char tmpl[] = "/tmp/gd-exe-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string plain = dir + "/plain";
  const std::string tool = dir + "/tool";
  for (const std::string& f : {plain, tool}) {
    std::FILE* fp = std::fopen(f.c_str(), "w");
    ASSERT_NE(fp, nullptr);
    std::fclose(fp);
  }
  ASSERT_EQ(chmod(tool.c_str(), 0755), 0);
  ASSERT_EQ(chmod(plain.c_str(), 0644), 0);
  EXPECT_TRUE(is_executable_file(tool));
  EXPECT_FALSE(is_executable_file(plain));
  EXPECT_FALSE(is_executable_file(dir));  // a directory is searchable, not a program
  EXPECT_EQ(find_on_path("tool", "::relative/bin:" + dir), tool);
  EXPECT_EQ(find_on_path("plain", dir), "");
  EXPECT_EQ(find_on_path("tool", ""), "");
  // The current directory holds `tool` here, and "." must not find it.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  EXPECT_EQ(find_on_path("tool", ".:"), "");
  ASSERT_EQ(chdir(cwd), 0);
  std::remove(plain.c_str());
  std::remove(tool.c_str());
  rmdir(dir.c_str());
}

TEST(UtilFd, DrainKeepsAllHeadOrTail) {
  auto fill = [](const std::string& text) {
    int p[2];
    EXPECT_EQ(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
    EXPECT_EQ(write(p[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
    return std::pair{p[0], p[1]};
  };
  {
    auto [r, w] = fill("0123456789");
    std::string all;
    EXPECT_TRUE(drain_fd(r, &all));  // writer still open: more may come
    EXPECT_EQ(all, "0123456789");
    close(w);
    EXPECT_FALSE(drain_fd(r, &all));  // end of file
    close(r);
  }
  {
    auto [r, w] = fill("0123456789");
    std::string head;
    bool truncated = false;
    EXPECT_TRUE(drain_fd_head(r, &head, 4, &truncated));
    EXPECT_EQ(head, "0123");
    EXPECT_TRUE(truncated);
    close(w);
    close(r);
  }
  {
    auto [r, w] = fill("0123456789");
    std::string tail;
    EXPECT_TRUE(drain_fd_tail(r, &tail, 4));
    EXPECT_EQ(tail, "6789");  // past 2 * 4: cut back to the last 4
    close(w);
    close(r);
  }
  std::string none;
  EXPECT_FALSE(drain_fd(-1, &none));
}

}  // namespace
}  // namespace gd
