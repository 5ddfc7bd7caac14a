#include "util/glibc_floor.h"

#include <fcntl.h>
#include <link.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gd {
namespace {

struct Search {
  uintptr_t pc;
  dl_find_object* out;
  bool found;
};

// The loader gives addresses as integers (dlpi_addr + p_vaddr); the
// struct _dl_find_object fills wants pointers.
void* as_pointer(uintptr_t address) {
  return reinterpret_cast<void*>(address);  // NOLINT(performance-no-int-to-ptr): see above
}

// dl_iterate_phdr's callback: the object whose PT_LOAD segments hold pc.
// Its map spans from the lowest segment's start to the highest one's end,
// as glibc's own _dl_find_object reports it (its start page-aligned, as
// the loader maps it).
int match_object(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* s = static_cast<Search*>(data);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  bool holds_pc = false;
  uintptr_t start = UINTPTR_MAX, end = 0;
  uintptr_t eh_frame = 0;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t seg = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD) {
      if (s->pc >= seg && s->pc < seg + ph.p_memsz) holds_pc = true;
      uintptr_t page_start = seg & ~(page - 1);  // where the mapping begins
      if (page_start < start) start = page_start;
      if (seg + ph.p_memsz > end) end = seg + ph.p_memsz;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh_frame = seg;
    }
  }
  if (!holds_pc) return 0;
  std::memset(s->out, 0, sizeof *s->out);
  s->out->dlfo_map_start = as_pointer(start);
  s->out->dlfo_map_end = as_pointer(end);
  // libgcc reads only the frame (unwind-dw2-fde-dip.c); the link map, which
  // only the loader could give without its lock, stays null.
  s->out->dlfo_eh_frame = eh_frame == 0 ? nullptr : as_pointer(eh_frame);
  s->found = true;
  return 1;
}

}  // namespace

int find_object(void* pc, dl_find_object* out) {
  Search s{reinterpret_cast<uintptr_t>(pc), out, false};
  dl_iterate_phdr(match_object, &s);
  return s.found ? 0 : -1;
}

void random_bytes(void* buf, size_t size) {
  auto* p = static_cast<unsigned char*>(buf);
  size_t done = 0;
  while (done < size) {
    ssize_t n = getrandom(p + done, size - done, 0);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno != EINTR) {
      break;  // ENOSYS: a kernel without getrandom
    }
  }
  if (done == size) return;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  while (fd >= 0 && done < size) {
    ssize_t n = read(fd, p + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  if (fd >= 0) close(fd);
  if (done < size) std::abort();  // glibc's arc4random also ends the process without randomness
}

uint32_t random_u32() {
  uint32_t v = 0;
  random_bytes(&v, sizeof v);
  return v;
}

}  // namespace gd
