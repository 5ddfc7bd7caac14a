// Reading a file the user named, with a size cap checked while reading.
//
// Every user-given file (a snapshot, a config, text to explain) goes through
// here, so that /dev/zero, `yes |`, a directory, a FIFO nobody writes to or a
// file that shrinks under us ends in one line, never in unbounded memory, a
// hang, a SIGBUS (no mmap) or an exception.
#pragma once

#include <cstddef>
#include <string>

#include "util/result.h"

namespace gd {

// The caps, one place (docs/check.md, docs/config.md, docs/explain.md).
inline constexpr size_t kConfigCapBytes = size_t{1} << 20;     // a TOML file of thresholds
inline constexpr size_t kSnapshotCapBytes = size_t{64} << 20;  // a 4-GPU node's snapshot: ~20 KiB
inline constexpr size_t kExplainCapBytes = size_t{64} << 20;   // pasted error output

// The whole of `path`, at most cap_bytes. The Error is only the reason,
// without the path, for the caller to frame ("No such file or directory",
// "Is a directory", "over the 64 MiB limit"):
//   - a regular file larger than the cap is refused before reading, and one
//     that grows past it while being read is refused there;
//   - a directory or a block device is refused;
//   - a FIFO, a pipe (/dev/fd/63 of `<(cmd)`) or a character device is read
//     as a stream up to the cap. The file is opened with O_NONBLOCK, so that
//     a FIFO with no writer does not block the open; it then reads as empty.
Result<std::string> read_file_capped(const std::string& path, size_t cap_bytes);

// The same from an open descriptor (stdin for "-"); fd stays open.
Result<std::string> read_fd_capped(int fd, size_t cap_bytes);

}  // namespace gd
