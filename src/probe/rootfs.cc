#include "probe/rootfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "util/text.h"

namespace gd {

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Closes a file descriptor on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

RootFs::RootFs(std::string root) : root_(std::move(root)) {
  if (root_.empty()) root_ = "/";
  // "/tmp/tree/" and "/tmp/tree" are the same root; "/" stays "/".
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

std::string RootFs::path(std::string_view abs) const {
  if (live()) return std::string(abs);
  std::string p = root_;
  if (abs.empty() || abs.front() != '/') p += '/';
  p += abs;
  return p;
}

Result<std::string> RootFs::read(std::string_view abs, size_t max_bytes) const {
  const std::string p = path(abs);
  // O_NONBLOCK: a FIFO or device in a recorded tree must not hang the probe;
  // the S_ISREG test below then refuses it.
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return Error{"no " + std::string(abs)};
    return Error{"cannot read " + std::string(abs) + ": " + errno_text(err)};
  }
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return Error{"cannot read " + std::string(abs) + ": " + errno_text(errno)};
  }
  if (!S_ISREG(st.st_mode)) return Error{std::string(abs) + " is not a regular file"};
  // procfs and sysfs files report size 0 (or 4096): read until EOF.
  std::string out;
  char buf[8192];
  while (out.size() < max_bytes) {
    size_t want = std::min(sizeof buf, max_bytes - out.size());
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{"cannot read " + std::string(abs) + ": " + errno_text(errno)};
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> RootFs::read_line(std::string_view abs, size_t max_bytes) const {
  auto r = read(abs, max_bytes);
  if (!r) return r;
  std::string_view text = *r;
  size_t nl = text.find('\n');
  if (nl != std::string_view::npos) text = text.substr(0, nl);
  return std::string(trim(text));
}

bool RootFs::exists(std::string_view abs) const {
  struct stat st;
  return ::stat(path(abs).c_str(), &st) == 0;
}

bool RootFs::is_dir(std::string_view abs) const {
  struct stat st;
  return ::stat(path(abs).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> RootFs::list(std::string_view dir, size_t max_entries) const {
  std::vector<std::string> names;
  DIR* d = ::opendir(path(dir).c_str());
  if (d == nullptr) return names;
  while (names.size() < max_entries) {
    errno = 0;
    struct dirent* e = ::readdir(d);
    if (e == nullptr) break;
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::string> RootFs::readlink(std::string_view abs) const {
  char buf[4096];
  ssize_t n = ::readlink(path(abs).c_str(), buf, sizeof buf);
  if (n < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return Error{"no " + std::string(abs)};
    return Error{"cannot readlink " + std::string(abs) + ": " + errno_text(err)};
  }
  return std::string(buf, static_cast<size_t>(n));
}

Result<struct stat> RootFs::stat(std::string_view abs) const {
  struct stat st;
  if (::stat(path(abs).c_str(), &st) != 0) {
    int err = errno;
    return Error{errno_text(err)};
  }
  return st;
}

std::string boot_id_hex(const RootFs& fs) {
  auto r = fs.read_line("/proc/sys/kernel/random/boot_id");
  if (!r) return "";
  std::string id;
  for (char c : *r) {
    if (c == '-') continue;
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (!hex) return "";
    id += c;
  }
  return id.size() == 32 ? id : "";
}

std::string btime_field(const RootFs& fs) {
  // A line per CPU and a long "intr" line come before btime.
  auto stat = fs.read("/proc/stat", size_t{16} << 20);
  if (!stat) return "";
  for (std::string_view line : split_lines(*stat)) {
    if (line.rfind("btime ", 0) == 0) return std::string(line.substr(6));
  }
  return "";
}

std::string boot_id_or_btime(const RootFs& fs) {
  if (auto id = fs.read_line("/proc/sys/kernel/random/boot_id"); id && !id->empty()) return *id;
  std::string btime = btime_field(fs);
  return btime.empty() ? "" : "btime:" + btime;
}

}  // namespace gd
