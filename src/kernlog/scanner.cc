#include "kernlog/scanner.h"

#include <hs.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "catalog/nvrm.h"
#include "kernlog/line.h"

namespace gd {

namespace {

// Every line the decoder can use contains one of these base keywords, or a
// literal of the pattern table (catalog/nvrm.cc) that holds none of them;
// those are added from the table so the two cannot drift apart. Few literals
// keep vectorscan on its fastest engine: one pass over the buffer finds the
// hits, and only the lines around a hit are parsed.
//
// "nvidia" is no keyword: nvidia-modeset, nvidia-drm, nvidia-persistenced
// and nvlink chatter say it on every line, and the lines the decoder needs
// that say it name something else too (the driver's "NVRM", "Bus Error",
// "AER:", "SXid", a pattern's literal). The one exception, an AER group's
// error names ("nvidia 0000:01:00.0:    [ 0] RxErr"), follows its group's
// "Bus Error" line directly: on_hit feeds the lines after a group while the
// decoder asks for them (KernelMessageDecoder::wants_aer_detail).
struct Keyword {
  std::string literal;
  unsigned flags;
  // A stand-in: a piece of several pattern literals (which would otherwise be
  // keywords one by one), confirmed at each hit (Confirm below).
  bool stand_in = false;
};

bool contains_keyword(std::string_view s, const std::vector<Keyword>& base) {
  return std::any_of(base.begin(), base.end(),
                     [&](const Keyword& k) { return s.find(k.literal) != std::string_view::npos; });
}

std::vector<Keyword> keywords() {
  std::vector<Keyword> k = {
      {"NVRM", 0},       // the driver's own lines, Xid
      {"AER:", 0},       // PCIe AER
      {"Bus Error", 0},  // PCIe AER detail, on the port or the device
      {"Xid", 0},        // SXid
      // Each stand-in is a piece of several of the pattern table's literals,
      // which would otherwise be keywords one by one: vectorscan scans with up
      // to about 15 literals at 6-10 GB/s, with 25 at 3 (bench/README.md,
      // logs_scan). A hit counts only where one of those literals surrounds
      // it, so noise that holds the piece ("Port module event: module 1" from
      // mlx5, 138,000 times in the bench's mixed log) costs a compare, not a
      // decode of its line.
      // "Unknown symbol", "disagrees about version of symbol"
      {"ymbol", 0, true},
      // "Module nvidia not found", "... unsigned module ...", "module verification"
      {"odule", 0, true},
      {"NVSwitch", 0},  // the fabric manager's NVSwitch lines
      // Shorter than their patterns' needles: vectorscan keys on a literal's
      // last bytes, and a literal that ends in a common word ("... system",
      // "... driver version", "... by service") makes it check the text at
      // every such word. "Detected Pre-NVL5 system" alone took the scan of
      // the bench's journald log from 13 to 3.9 GB/s; "Pre-NVL5" left it at 13.
      {"Loaded the UVM", 0, true},             // "Loaded the UVM driver"
      {"could not insert 'nvidia'", 0, true},  // "...: Key was rejected by service"
      {"Pre-NVL5", 0, true},                   // "Detected Pre-NVL5 system"
      {"don't match", 0, true},                // "... don't match with driver version"
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

// A pattern literal that holds a stand-in keyword, and where: the hit (the
// keyword's end) confirms when the literal's bytes lie around it.
struct Confirm {
  std::string literal;
  size_t keyword_end;  // in the literal
};

// The pattern literals (needle, or prefix without one) that hold `keyword`,
// at each place they hold it.
std::vector<Confirm> confirms_of(const std::string& keyword) {
  std::vector<Confirm> out;
  for (const LogPattern& p : log_patterns()) {
    std::string lit = *p.needle ? p.needle : p.prefix;
    for (size_t at = lit.find(keyword); at != std::string::npos; at = lit.find(keyword, at + 1)) {
      Confirm c{lit, at + keyword.size()};
      bool known = std::any_of(out.begin(), out.end(), [&](const Confirm& o) {
        return o.literal == c.literal && o.keyword_end == c.keyword_end;
      });
      if (!known) out.push_back(std::move(c));
    }
  }
  return out;
}

struct Prefilter {
  hs_database_t* db = nullptr;
  std::string error;
  std::vector<std::vector<Confirm>> confirm;  // by keyword id; empty: every hit counts
};

const Prefilter& prefilter() {
  static const Prefilter p = [] {
    Prefilter out;
    std::vector<std::string> escaped;
    std::vector<const char*> patterns;
    std::vector<unsigned> flags, ids;
    for (const Keyword& k : keywords()) {
      out.confirm.push_back(k.stand_in ? confirms_of(k.literal) : std::vector<Confirm>{});
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
  const std::vector<std::vector<Confirm>>* confirm;  // Prefilter::confirm
  const char* base;                                  // the whole text
  size_t size;
  size_t offset;  // of the chunk being scanned
  size_t done;    // lines before this offset are handled
};

int on_hit(unsigned, unsigned long long, unsigned long long to, unsigned, void* p);

// "[  811.239125]", as dmesg prints the time since boot.
std::string dmesg_stamp(double boot_s) {
  char stamp[48];
  std::snprintf(stamp, sizeof stamp, "[%5llu.%06llu]", static_cast<unsigned long long>(boot_s),
                static_cast<unsigned long long>(
                    std::llround((boot_s - static_cast<uint64_t>(boot_s)) * 1e6)));
  return stamp;
}

// A fold keeps its newest occurrences one by one (the recent-sample ring)
// and sums up the older ones by the clocks they carry, so its memory is
// fixed however often the event repeats.
constexpr size_t kRecent = 8;

// Older occurrences of one fold that carry the same clocks (boot, wall,
// both or none): their count, time range and the first and last of them.
struct Summary {
  uint64_t n = 0;
  uint64_t first_seq = 0, last_seq = 0;
  Occurrence first;
  Occurrence last;
  double min_boot = 0, max_boot = 0;
  int64_t min_unix = 0, max_unix = 0;

  void add(const Occurrence& o, uint64_t seq) {
    if (n == 0) {
      first_seq = seq;
      first = o;
      if (o.boot_s) min_boot = max_boot = *o.boot_s;
      if (o.unix_s) min_unix = max_unix = *o.unix_s;
    } else {
      if (o.boot_s)
        min_boot = std::min(min_boot, *o.boot_s), max_boot = std::max(max_boot, *o.boot_s);
      if (o.unix_s)
        min_unix = std::min(min_unix, *o.unix_s), max_unix = std::max(max_unix, *o.unix_s);
    }
    ++n;
    last_seq = seq;
    last = o;
  }
};

struct Stamped {
  Occurrence when;
  uint64_t seq;  // order in the log
};

struct Fold {
  KernelEvent event;           // the first occurrence, with the latest line
  std::deque<Stamped> recent;  // the newest occurrences, at most kRecent
  Summary older[4];            // the rest, by clocks: [has boot * 2 + has unix]
};

int clocks_of(const Occurrence& o) { return (o.boot_s ? 2 : 0) + (o.unix_s ? 1 : 0); }

}  // namespace

struct KernelLogScanner::Impl {
  int year;
  KernelMessageDecoder decoder;
  std::vector<DecodedEvent> decoded;  // from the decoder, folded at once (absorb)
  std::deque<KernelEvent> fresh;      // for take_new, at most keep_new
  size_t keep_new = 4096;
  std::vector<Fold> folds;
  std::unordered_map<std::string, size_t> fold_index;
  uint64_t seq = 0;
  uint64_t unfolded = 0;  // occurrences of events beyond kMaxKernelEvents
  std::optional<double> newest_boot;
  std::optional<int64_t> newest_unix;
  // set_window: occurrences outside it are not folded.
  std::optional<ScanReference> window_ref;
  std::optional<double> window_max_age_s;
  uint64_t bytes = 0;

  bool outside_window(const Occurrence& o) const {
    if (!window_ref || !window_max_age_s) return false;
    std::optional<double> age;
    if (o.boot_s && window_ref->now_boot_s) {
      age = *window_ref->now_boot_s - *o.boot_s;
    } else if (o.unix_s && window_ref->now_unix_s) {
      age = static_cast<double>(*window_ref->now_unix_s - *o.unix_s);
    }
    return age && *age > *window_max_age_s;
  }
  hs_scratch_t* scratch = nullptr;

  void absorb() {
    for (DecodedEvent& d : decoded) {
      const KernelEvent& e = d.event;
      if (d.when.boot_s && (!newest_boot || *d.when.boot_s > *newest_boot))
        newest_boot = d.when.boot_s;
      if (d.when.unix_s && (!newest_unix || *d.when.unix_s > *newest_unix))
        newest_unix = d.when.unix_s;
      if (keep_new > 0) {
        if (fresh.size() >= keep_new) fresh.pop_front();
        KernelEvent copy = e;
        copy.first = copy.last = d.when.stamp;
        fresh.push_back(std::move(copy));
      }
      if (outside_window(d.when)) continue;
      std::string key = e.kind + '|' + e.type + '|' + std::to_string(e.code) + '|' + e.gpu;
      auto it = fold_index.find(key);
      if (it == fold_index.end()) {
        if (folds.size() >= kMaxKernelEvents) {
          ++unfolded;
          continue;
        }
        it = fold_index.emplace(std::move(key), folds.size()).first;
        folds.push_back({std::move(d.event), {}, {}});
      } else {
        folds[it->second].event.line = std::move(d.event.line);  // evidence: the latest
      }
      Fold& f = folds[it->second];
      if (f.recent.size() == kRecent) {
        Stamped& old = f.recent.front();
        f.older[clocks_of(old.when)].add(old.when, old.seq);
        f.recent.pop_front();
      }
      f.recent.push_back({std::move(d.when), seq++});
    }
    decoded.clear();
  }

  // Feeds the lines of `text` from `from` on while the decoder asks for an
  // AER group's detail lines (they hold no keyword), the line that ends the
  // group included. Returns where the first line not fed starts.
  size_t feed_aer_details(std::string_view text, size_t from) {
    while (decoder.wants_aer_detail() && from < text.size()) {
      size_t nl = text.find('\n', from);
      if (nl == std::string_view::npos) nl = text.size();
      line(text.substr(from, nl - from));
      from = nl + 1;
    }
    return from;
  }

  void line(std::string_view raw) {
    LogLine l = parse_log_line(raw, year);
    // A saved kmsg record's header is no time for people: print it as dmesg does.
    Occurrence when{l.form == LineForm::kKmsg ? dmesg_stamp(*l.boot_s) : std::string(l.stamp),
                    l.boot_s, l.unix_s};
    decoder.feed(l.message, when, raw, &decoded);
    if (!decoded.empty()) absorb();
  }
};

namespace {

// Does one of `cs` lie around a stand-in's hit ending at `end_of_hit`?
bool confirmed(const std::vector<Confirm>& cs, const ScanState& st, size_t end_of_hit) {
  return std::any_of(cs.begin(), cs.end(), [&](const Confirm& c) {
    if (end_of_hit < c.keyword_end) return false;
    size_t start = end_of_hit - c.keyword_end;
    return start + c.literal.size() <= st.size &&
           std::memcmp(st.base + start, c.literal.data(), c.literal.size()) == 0;
  });
}

// A keyword ends at `to`: hand its whole line to the decoder, once.
int on_hit(unsigned id, unsigned long long, unsigned long long to, unsigned, void* p) {
  auto* st = static_cast<ScanState*>(p);
  size_t end_of_hit = st->offset + static_cast<size_t>(to);
  if (end_of_hit <= st->done) return 0;  // this line is handled already
  const std::vector<Confirm>& cs = (*st->confirm)[id];
  if (!cs.empty() && !confirmed(cs, *st, end_of_hit)) return 0;
  const char* hit = st->base + end_of_hit - 1;
  const char* begin = hit;
  while (begin > st->base + st->done && begin[-1] != '\n') --begin;
  const char* end = static_cast<const char*>(std::memchr(hit, '\n', st->base + st->size - hit));
  if (end == nullptr) end = st->base + st->size;
  st->impl->line(std::string_view(begin, static_cast<size_t>(end - begin)));
  st->done = st->impl->feed_aer_details(std::string_view(st->base, st->size),
                                        static_cast<size_t>(end - st->base) + 1);
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
    impl_->absorb();
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
  ScanState state{impl_.get(), &pf.confirm, text.data(), text.size(), 0, 0};
  // The previous block ended inside an AER group: its detail lines come first.
  state.done = impl_->feed_aer_details(text, 0);
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

void KernelLogScanner::set_window(const ScanReference& ref, std::optional<double> max_age_s) {
  impl_->window_ref = ref;
  impl_->window_max_age_s = max_age_s;
}

void KernelLogScanner::keep_new(size_t max_events) {
  impl_->keep_new = max_events;
  while (impl_->fresh.size() > max_events) impl_->fresh.pop_front();
}

std::vector<KernelEvent> KernelLogScanner::take_new() {
  impl_->decoder.flush(&impl_->decoded);
  impl_->absorb();
  std::vector<KernelEvent> out(std::make_move_iterator(impl_->fresh.begin()),
                               std::make_move_iterator(impl_->fresh.end()));
  impl_->fresh.clear();
  return out;
}

uint64_t KernelLogScanner::unfolded() const { return impl_->unfolded; }

KernelLogInfo KernelLogScanner::finish(const ScanReference& ref, std::optional<double> max_age_s) {
  impl_->decoder.flush(&impl_->decoded);
  impl_->absorb();
  // Without a given "now", the newest time in the log is the reference.
  std::optional<double> now_boot = ref.now_boot_s;
  std::optional<int64_t> now_unix = ref.now_unix_s;
  if (!now_boot && !now_unix) {
    now_boot = impl_->newest_boot;
    now_unix = impl_->newest_unix;
  }
  auto age = [&](const Occurrence& o) -> std::optional<double> {
    if (o.boot_s && now_boot) return std::max(0.0, *now_boot - *o.boot_s);
    if (o.unix_s && now_unix)
      return std::max<double>(0, static_cast<double>(*now_unix - *o.unix_s));
    return std::nullopt;
  };
  // The ages of a summary's oldest and newest occurrence; nullopt: no clock
  // applies, so all of them are kept.
  auto ages = [&](const Summary& s, int clocks) -> std::optional<std::pair<double, double>> {
    if ((clocks & 2) && now_boot)
      return std::pair{std::max(0.0, *now_boot - s.max_boot),
                       std::max(0.0, *now_boot - s.min_boot)};
    if ((clocks & 1) && now_unix)
      return std::pair{std::max<double>(0, static_cast<double>(*now_unix - s.max_unix)),
                       std::max<double>(0, static_cast<double>(*now_unix - s.min_unix))};
    return std::nullopt;
  };
  // A boot-clock stamp on the wall clock: the boot time is the reference's
  // wall time less its boot time, when it has both (read live, or a file
  // whose last line prints both clocks). Stamps from before a suspend read
  // late by its length: the boot clock of printk stops while suspended.
  std::optional<int64_t> boot_unix;
  if (ref.now_boot_s && ref.now_unix_s) {
    boot_unix = *ref.now_unix_s - static_cast<int64_t>(*ref.now_boot_s);
  }
  auto wall = [&](const Occurrence& o) -> std::optional<int64_t> {
    if (o.unix_s) return o.unix_s;
    if (o.boot_s && boot_unix) return *boot_unix + static_cast<int64_t>(*o.boot_s);
    return std::nullopt;
  };
  KernelLogInfo info;
  info.attempted = true;
  info.ages_to_log_end = ref.from_log_end || (!ref.now_boot_s && !ref.now_unix_s);
  info.bytes = impl_->bytes;
  info.unfolded = impl_->unfolded;
  info.gpu_uuids = impl_->decoder.gpu_uuids();
  for (const Fold& f : impl_->folds) {
    KernelEvent e = f.event;
    uint64_t count = 0;
    uint64_t first_seq = UINT64_MAX, last_seq = 0;
    bool any = false;
    auto take = [&](uint64_t n, uint64_t fseq, const Occurrence& first, uint64_t lseq,
                    const Occurrence& last) {
      count += n;
      if (fseq < first_seq) {
        first_seq = fseq;
        e.first = first.stamp;
        e.first_unix_s = wall(first);
      }
      if (!any || lseq > last_seq) {
        last_seq = lseq;
        e.last = last.stamp;
        e.age_s = age(last);
        e.last_unix_s = wall(last);
      }
      any = true;
    };
    // A window not declared up front takes the older occurrences of a clock
    // whole: dropped when even the newest of them is outside it, else kept
    // (all of them, those outside too).
    for (int clocks = 0; clocks < 4; ++clocks) {
      const Summary& s = f.older[clocks];
      if (s.n == 0) continue;
      // Declared up front, the window already dropped what it drops.
      auto a = ages(s, clocks);
      if (max_age_s && !impl_->window_max_age_s && a && a->first > *max_age_s) continue;
      take(s.n, s.first_seq, s.first, s.last_seq, s.last);
    }
    for (const Stamped& o : f.recent) {
      std::optional<double> a = age(o.when);
      if (max_age_s && a && *a > *max_age_s) continue;
      take(1, o.seq, o.when, o.seq, o.when);
    }
    if (count == 0) continue;
    e.count = static_cast<int>(std::min<uint64_t>(count, INT32_MAX));
    info.events.push_back(std::move(e));
  }
  return info;
}

}  // namespace gd
