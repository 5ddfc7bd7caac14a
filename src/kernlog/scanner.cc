#include "kernlog/scanner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <unordered_map>

#include "kernlog/line.h"

namespace gd {

namespace {

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

// When the boot clock was 0 on the wall clock: the reference's wall time less
// its boot time, when it has both (read live, or a file whose last line
// prints both clocks). Stamps from before a suspend read late by its length:
// the boot clock of printk stops while suspended.
std::optional<int64_t> boot_unix_of(const ScanReference& ref) {
  if (!ref.now_boot_s || !ref.now_unix_s) return std::nullopt;
  return *ref.now_unix_s - static_cast<int64_t>(*ref.now_boot_s);
}

// An occurrence on the wall clock: its line's own time, else its boot-clock
// stamp from boot_unix.
std::optional<int64_t> wall_of(const Occurrence& o, std::optional<int64_t> boot_unix) {
  if (o.unix_s) return o.unix_s;
  if (o.boot_s && boot_unix) return *boot_unix + static_cast<int64_t>(*o.boot_s);
  return std::nullopt;
}

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
  // set_since: occurrences before it on the wall clock are not folded.
  std::optional<int64_t> window_since;
  std::optional<int64_t> window_boot_unix;  // boot_unix_of(the since window's ref)
  std::optional<int64_t> written_by;        // set_written_by
  uint64_t undated = 0;                     // finish(): kept, not placed in time
  uint64_t bytes = 0;

  bool outside_window(const Occurrence& o) const {
    if (window_since) {
      // No wall time yet: kept, and judged again by finish().
      auto wall = wall_of(o, window_boot_unix);
      return wall && *wall < *window_since;
    }
    if (!window_ref || !window_max_age_s) return false;
    std::optional<double> age;
    if (o.boot_s && window_ref->now_boot_s) {
      age = *window_ref->now_boot_s - *o.boot_s;
    } else if (o.unix_s && window_ref->now_unix_s) {
      age = static_cast<double>(*window_ref->now_unix_s - *o.unix_s);
    }
    return age && *age > *window_max_age_s;
  }
  CandidateFinder finder;  // for add_text
  uint64_t fed_end = 0;    // the text up to here was fed to the decoder (or passed over)

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
      std::string key = e.kind + '|' + e.type + '|' + std::to_string(e.code) + '|' + e.gpu + '|' +
                        std::to_string(e.link);  // an SXid folds per NVLink port
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

  // Feeds the candidates the decoder takes: every hit line, and a detail
  // candidate while an AER group asks for it and the line follows the last
  // one fed, as the text has them. A line fed already (found twice) is not
  // fed again.
  void feed(const CandidateLines& found) {
    for (const CandidateLines::Line& l : found.lines) {
      if (l.offset < fed_end) continue;
      const bool next = l.offset == fed_end;
      if (!l.hit && !(next && decoder.wants_aer_detail())) continue;
      if (!next) decoder.passed_over_lines();
      line(found.line(l));
      fed_end = l.offset + l.size + 1;
    }
  }

  void line(std::string_view raw) {
    LogLine l = parse_log_line(raw, year, written_by);
    // A saved kmsg record's header is no time for people: print it as dmesg does.
    Occurrence when{l.form == LineForm::kKmsg ? dmesg_stamp(*l.boot_s) : std::string(l.stamp),
                    l.boot_s, l.unix_s};
    decoder.feed(l.message, when, raw, &decoded);
    if (!decoded.empty()) absorb();
  }
};

std::optional<FieldGap> skipped_lines_gap(uint64_t n) {
  if (n == 0) return std::nullopt;
  return FieldGap{kKernelLogEventsField,
                  std::to_string(n) + (n == 1 ? " line" : " lines") +
                      " of 4 MiB or more (no kernel message is that long: a corrupted or "
                      "forged log) " +
                      (n == 1 ? "was" : "were") + " skipped undecoded; the lines after " +
                      (n == 1 ? "it" : "them") + " were read"};
}

KernelLogScanner::KernelLogScanner(int year) : impl_(std::make_unique<Impl>()) {
  impl_->year = year;
}

KernelLogScanner::~KernelLogScanner() = default;

void KernelLogScanner::add_line(std::string_view line) {
  Impl& s = *impl_;
  s.bytes += line.size() + 1;
  if (s.fed_end != s.finder.offset()) s.decoder.passed_over_lines();
  s.line(line);
  s.fed_end = s.finder.offset();  // the next text follows this line
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
  Impl& s = *impl_;
  s.bytes += text.size();
  // An AER group whose last line ends where this text starts (the previous
  // block's last line; add_line) may go on in its first lines.
  if (s.decoder.wants_aer_detail() && s.fed_end == s.finder.offset()) {
    s.finder.expect_continuation();
  }
  s.finder.add_text(text);
  s.feed(s.finder.found());
  s.finder.clear();
}

void KernelLogScanner::add_candidates(const CandidateLines& found) {
  Impl& s = *impl_;
  s.bytes += found.end - found.begin;
  s.feed(found);
  s.finder.skip_to(found.end);
}

void KernelLogScanner::skip_text(uint64_t bytes) {
  impl_->bytes += bytes;
  impl_->finder.pass_over(bytes);
}

uint64_t KernelLogScanner::text_offset() const { return impl_->finder.offset(); }

void KernelLogScanner::set_window(const ScanReference& ref, std::optional<double> max_age_s) {
  impl_->window_ref = ref;
  impl_->window_max_age_s = max_age_s;
}

void KernelLogScanner::set_since(const ScanReference& ref, int64_t since_unix_s) {
  impl_->window_since = since_unix_s;
  impl_->window_boot_unix = boot_unix_of(ref);
}

void KernelLogScanner::set_written_by(int64_t unix_s) { impl_->written_by = unix_s; }

uint64_t KernelLogScanner::undated() const { return impl_->undated; }

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
  // A boot-clock stamp on the wall clock (boot_unix_of).
  const std::optional<int64_t> boot_unix = boot_unix_of(ref);
  auto wall = [&](const Occurrence& o) { return wall_of(o, boot_unix); };
  // The window: set_since's wall-clock start, else max_age_s against ref.
  const std::optional<int64_t> since = impl_->window_since;
  // (A wall-clock window replaces max_age_s.)
  const bool by_age = !since && max_age_s.has_value();
  const double max_age = by_age ? *max_age_s : 0;
  impl_->undated = 0;
  // Whether an occurrence is outside the window; nullopt: the window cannot
  // place it in time (kept, and counted).
  auto outside = [&](const Occurrence& o) -> std::optional<bool> {
    if (since) {
      auto w = wall(o);
      if (!w) return std::nullopt;
      return *w < *since;
    }
    if (!by_age) return false;
    auto a = age(o);
    if (!a) return std::nullopt;
    return *a > max_age;
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
      if (since) {
        // The newest of them on the wall clock (the line's own time first, as wall()).
        std::optional<int64_t> newest;
        if (clocks & 1) {
          newest = s.max_unix;
        } else if ((clocks & 2) && boot_unix) {
          newest = *boot_unix + static_cast<int64_t>(s.max_boot);
        }
        if (!newest) {
          impl_->undated += s.n;
        } else if (*newest < *since) {
          continue;
        }
      } else if (by_age) {
        auto a = ages(s, clocks);
        if (!a) {
          impl_->undated += s.n;
        } else if (!impl_->window_max_age_s && a->first > max_age) {
          continue;
        }
      }
      take(s.n, s.first_seq, s.first, s.last_seq, s.last);
    }
    for (const Stamped& o : f.recent) {
      std::optional<bool> out = outside(o.when);
      if (out && *out) continue;
      if (!out) ++impl_->undated;
      take(1, o.seq, o.when, o.seq, o.when);
    }
    if (count == 0) continue;
    e.count = static_cast<int>(std::min<uint64_t>(count, INT32_MAX));
    info.events.push_back(std::move(e));
  }
  return info;
}

}  // namespace gd
