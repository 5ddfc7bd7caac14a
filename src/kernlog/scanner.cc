#include "kernlog/scanner.h"

#include <hs.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>

#include "catalog/nvrm.h"
#include "kernlog/line.h"

namespace gd {

namespace {

// Every line the decoder can use contains one of these base keywords, or a
// literal of the pattern table (catalog/nvrm.cc) that holds none of them;
// those are added from the table so the two cannot drift apart. Few literals
// keep vectorscan on its fastest engine: one pass over the buffer finds the
// hits, and only the lines around a hit are parsed.
struct Keyword {
  std::string literal;
  unsigned flags;
};

bool contains_keyword(std::string_view s, const std::vector<Keyword>& base) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Keyword& k : base) {
    if (s.find(k.literal) != std::string_view::npos) return true;
    if ((k.flags & HS_FLAG_CASELESS) && lower.find(k.literal) != std::string::npos) return true;
  }
  return false;
}

std::vector<Keyword> keywords() {
  std::vector<Keyword> k = {
      {"NVRM", 0},  // the driver's own lines, Xid
      {"nvidia",
       HS_FLAG_CASELESS},  // nvidia-uvm, nvidia-nvswitchN, "nvidia 0000:..: PCIe Bus Error"
      {"AER:", 0},         // PCIe AER
      {"Bus Error", 0},    // PCIe AER detail, on the port or the device
      {"Xid", 0},          // SXid
  };
  const std::vector<Keyword> base = k;
  for (const LogPattern& p : log_patterns()) {
    if (contains_keyword(p.prefix, base) || contains_keyword(p.needle, base)) continue;
    std::string lit = *p.needle ? p.needle : p.prefix;
    bool known =
        std::any_of(k.begin(), k.end(), [&](const Keyword& w) { return w.literal == lit; });
    if (!lit.empty() && !known) k.push_back({lit, 0});
  }
  return k;
}

struct Prefilter {
  hs_database_t* db = nullptr;
  std::string error;
};

const Prefilter& prefilter() {
  static const Prefilter p = [] {
    Prefilter out;
    std::vector<std::string> escaped;
    std::vector<const char*> patterns;
    std::vector<unsigned> flags, ids;
    for (const Keyword& k : keywords()) {
      std::string e;
      for (char c : k.literal) {
        if (!std::isalnum(static_cast<unsigned char>(c))) e += '\\';
        e += c;
      }
      escaped.push_back(e);
      flags.push_back(k.flags);
      ids.push_back(static_cast<unsigned>(ids.size()));
    }
    for (const auto& e : escaped) patterns.push_back(e.c_str());
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(patterns.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(patterns.size()), HS_MODE_BLOCK, nullptr, &out.db,
                         &err) != HS_SUCCESS) {
      out.error = err ? err->message : "hs_compile_multi failed";
      hs_free_compile_error(err);
      out.db = nullptr;
    }
    return out;
  }();
  return p;
}

struct ScanState {
  KernelLogScanner::Impl* impl;
  const char* base;  // the whole text
  size_t size;
  size_t offset;  // of the chunk being scanned
  size_t done;    // lines before this offset are handled
};

int on_hit(unsigned, unsigned long long, unsigned long long to, unsigned, void* p);

// "[  811.239125]", as dmesg prints the time since boot.
std::string dmesg_stamp(double boot_s) {
  char stamp[48];
  std::snprintf(
      stamp, sizeof stamp, "[%5llu.%06llu]", static_cast<unsigned long long>(boot_s),
      static_cast<unsigned long long>((boot_s - static_cast<uint64_t>(boot_s)) * 1e6 + 0.5));
  return stamp;
}

struct Fold {
  KernelEvent event;
  std::vector<Occurrence> times;  // every occurrence, for windows
};

}  // namespace

struct KernelLogScanner::Impl {
  int year;
  KernelMessageDecoder decoder;
  std::vector<DecodedEvent> decoded;  // not yet folded
  size_t taken = 0;                   // decoded[0, taken) went out through take_new
  std::vector<Fold> folds;
  std::map<std::string, size_t> fold_index;
  uint64_t bytes = 0;
  hs_scratch_t* scratch = nullptr;

  void fold_all() {
    for (DecodedEvent& d : decoded) {
      const KernelEvent& e = d.event;
      std::string key = e.kind + '|' + e.type + '|' + std::to_string(e.code) + '|' + e.gpu;
      auto [it, fresh] = fold_index.try_emplace(key, folds.size());
      if (fresh) {
        folds.push_back({e, {}});
      } else {
        folds[it->second].event.line = e.line;  // evidence: the latest occurrence
      }
      folds[it->second].times.push_back(std::move(d.when));
    }
    decoded.clear();
    taken = 0;
  }

  void line(std::string_view raw) {
    LogLine l = parse_log_line(raw, year);
    // A saved kmsg record's header is no time for people: print it as dmesg does.
    Occurrence when{l.form == LineForm::kKmsg ? dmesg_stamp(*l.boot_s) : std::string(l.stamp),
                    l.boot_s, l.unix_s};
    decoder.feed(l.message, when, raw, &decoded);
  }
};

namespace {

// A keyword ends at `to`: hand its whole line to the decoder, once.
int on_hit(unsigned, unsigned long long, unsigned long long to, unsigned, void* p) {
  auto* st = static_cast<ScanState*>(p);
  size_t end_of_hit = st->offset + static_cast<size_t>(to);
  if (end_of_hit <= st->done) return 0;  // this line is handled already
  const char* hit = st->base + end_of_hit - 1;
  const char* begin = hit;
  while (begin > st->base + st->done && begin[-1] != '\n') --begin;
  const char* end = static_cast<const char*>(std::memchr(hit, '\n', st->base + st->size - hit));
  if (end == nullptr) end = st->base + st->size;
  st->impl->line(std::string_view(begin, static_cast<size_t>(end - begin)));
  st->done = static_cast<size_t>(end - st->base) + 1;
  return 0;
}

}  // namespace

KernelLogScanner::KernelLogScanner(int year) : impl_(std::make_unique<Impl>()) {
  impl_->year = year;
}

KernelLogScanner::~KernelLogScanner() {
  if (impl_->scratch) hs_free_scratch(impl_->scratch);
}

void KernelLogScanner::add_line(std::string_view line) {
  impl_->bytes += line.size() + 1;
  impl_->line(line);
}

void KernelLogScanner::add_record(const KmsgRecord& r) {
  impl_->bytes += r.message.size() + 1;
  double boot_s = static_cast<double>(r.ts_usec) / 1e6;
  Occurrence when{dmesg_stamp(boot_s), boot_s, std::nullopt};
  // A record may hold several lines (a message with \x0a inside).
  std::string_view m = r.message;
  while (!m.empty()) {
    size_t nl = m.find('\n');
    impl_->decoder.feed(m.substr(0, nl), when, m.substr(0, nl), &impl_->decoded);
    if (nl == std::string_view::npos) break;
    m.remove_prefix(nl + 1);
  }
}

void KernelLogScanner::add_text(std::string_view text) {
  impl_->bytes += text.size();
  const Prefilter& pf = prefilter();
  if (pf.db == nullptr) {  // cannot happen with fixed literals; stay correct anyway
    size_t start = 0;
    while (start < text.size()) {
      size_t nl = text.find('\n', start);
      if (nl == std::string_view::npos) nl = text.size();
      impl_->line(text.substr(start, nl - start));
      start = nl + 1;
    }
    return;
  }
  if (impl_->scratch == nullptr && hs_alloc_scratch(pf.db, &impl_->scratch) != HS_SUCCESS) {
    impl_->scratch = nullptr;
  }
  ScanState state{impl_.get(), text.data(), text.size(), 0, 0};
  // hs_scan takes an unsigned length: scan in chunks that end at a newline,
  // so no keyword straddles two chunks.
  constexpr size_t kChunk = size_t{1} << 30;
  while (state.offset < text.size()) {
    size_t len = std::min(kChunk, text.size() - state.offset);
    if (state.offset + len < text.size()) {
      size_t nl = text.rfind('\n', state.offset + len);
      if (nl != std::string_view::npos && nl > state.offset) len = nl + 1 - state.offset;
    }
    hs_scan(pf.db, text.data() + state.offset, static_cast<unsigned>(len), 0, impl_->scratch,
            on_hit, &state);
    state.offset += len;
  }
}

std::vector<KernelEvent> KernelLogScanner::take_new() {
  impl_->decoder.flush(&impl_->decoded);
  std::vector<KernelEvent> out;
  for (size_t i = impl_->taken; i < impl_->decoded.size(); ++i) {
    KernelEvent e = impl_->decoded[i].event;
    e.first = e.last = impl_->decoded[i].when.stamp;
    out.push_back(std::move(e));
  }
  impl_->taken = impl_->decoded.size();
  return out;
}

KernelLogInfo KernelLogScanner::finish(const ScanReference& ref, std::optional<double> max_age_s) {
  impl_->decoder.flush(&impl_->decoded);
  impl_->fold_all();
  // Without a given "now", the newest time in the log is the reference.
  std::optional<double> now_boot = ref.now_boot_s;
  std::optional<int64_t> now_unix = ref.now_unix_s;
  if (!now_boot && !now_unix) {
    for (const Fold& f : impl_->folds) {
      for (const Occurrence& o : f.times) {
        if (o.boot_s && (!now_boot || *o.boot_s > *now_boot)) now_boot = o.boot_s;
        if (o.unix_s && (!now_unix || *o.unix_s > *now_unix)) now_unix = o.unix_s;
      }
    }
  }
  auto age = [&](const Occurrence& o) -> std::optional<double> {
    if (o.boot_s && now_boot) return std::max(0.0, *now_boot - *o.boot_s);
    if (o.unix_s && now_unix)
      return std::max<double>(0, static_cast<double>(*now_unix - *o.unix_s));
    return std::nullopt;
  };
  KernelLogInfo info;
  info.attempted = true;
  info.bytes = impl_->bytes;
  info.gpu_uuids = impl_->decoder.gpu_uuids();
  for (const Fold& f : impl_->folds) {
    KernelEvent e = f.event;
    e.count = 0;
    for (const Occurrence& o : f.times) {
      std::optional<double> a = age(o);
      if (max_age_s && a && *a > *max_age_s) continue;
      if (e.count == 0) e.first = o.stamp;
      e.last = o.stamp;
      e.age_s = a;
      ++e.count;
    }
    if (e.count > 0) info.events.push_back(std::move(e));
  }
  return info;
}

}  // namespace gd
