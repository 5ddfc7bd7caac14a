// Reading a child's pipe without blocking (the fd is O_NONBLOCK).
#pragma once

#include <cstddef>
#include <string>

namespace gd {

// Each reads what is there without blocking and appends it to *into; false
// at end of file or on an error other than EAGAIN (then treat the pipe as
// closed; a negative fd is such an error).
//
// Keeps all of it.
bool drain_fd(int fd, std::string* into);
// Keeps the first max bytes of *into; *truncated (when given) becomes true
// once a byte is dropped.
bool drain_fd_head(int fd, std::string* into, size_t max, bool* truncated);
// Keeps at least the last max bytes: *into is cut back to max only once it
// passes 2 * max, so the erase costs O(1) a byte.
bool drain_fd_tail(int fd, std::string* into, size_t max);

}  // namespace gd
