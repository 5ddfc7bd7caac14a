// RootFs: the one seam through which every file read of the probes goes.
//
// Root "/" is the live machine; any other root is a recorded tree (see
// tests/roots/README.md) laid out like the machine: <root>/proc, <root>/sys,
// <root>/dev, <root>/run, ... Paths are always given as the user sees them
// ("/proc/modules"); errors name that path too, never the rooted one.
//
// Reads are bounded (max_bytes) and refuse anything that is not a regular
// file, so a stray FIFO or character device in a tree can never block a probe.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace gd {

class RootFs {
 public:
  explicit RootFs(std::string root);

  const std::string& root() const { return root_; }
  bool live() const { return root_ == "/"; }

  // "/proc/modules" -> "<root>/proc/modules" ("/proc/modules" when live).
  std::string path(std::string_view abs) const;

  // The file's content, at most max_bytes of it. Error: "no /proc/x",
  // "cannot read /proc/x: Permission denied", "/proc/x is not a regular file".
  Result<std::string> read(std::string_view abs, size_t max_bytes = 1 << 20) const;
  // The first line of the file, trimmed of surrounding white space.
  Result<std::string> read_line(std::string_view abs, size_t max_bytes = 4096) const;

  bool exists(std::string_view abs) const;  // follows symlinks
  bool is_dir(std::string_view abs) const;
  // Entry names of a directory (no "." / ".."), sorted; at most max_entries.
  // Empty when the directory is missing or unreadable.
  std::vector<std::string> list(std::string_view dir, size_t max_entries = 100000) const;
  Result<std::string> readlink(std::string_view abs) const;
  Result<struct stat> stat(std::string_view abs) const;  // follows symlinks

 private:
  std::string root_;
};

// The kernel's id of the running boot, read through fs, by two rules.
//
// /proc/sys/kernel/random/boot_id: "a6a7c528-2340-47bb-984e-4e6b64c199cc";
// the journal's _BOOT_ID is the same without dashes, which this returns.
// "" when unknown.
std::string boot_id_hex(const RootFs& fs);
// The boot_id line as it is, which keeps events of different boots apart:
// their kernel log times all restart at 0. Falls back to "btime:<unix s>"
// from /proc/stat, then "".
std::string boot_id_or_btime(const RootFs& fs);
// /proc/stat's "btime" value as written ("1733011200", the boot as a unix
// time); "" when unknown.
std::string btime_field(const RootFs& fs);

}  // namespace gd
