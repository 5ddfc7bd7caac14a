#include "kernlog/candidates.h"

#include <hs.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "catalog/nvrm.h"
#include "kernlog/decode.h"
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
// "Bus Error" line directly: the lines after a group's first line are kept
// as detail candidates (kAerDetailLines).
struct Keyword {
  std::string literal;
  // A stand-in: a piece of several pattern literals (which would otherwise be
  // keywords one by one), confirmed at each hit (Confirm below).
  bool stand_in = false;
  // Its line may open an AER group: the lines after it are detail candidates.
  bool opens_aer = false;
};

bool contains_keyword(std::string_view s, const std::vector<Keyword>& base) {
  return std::any_of(base.begin(), base.end(),
                     [&](const Keyword& k) { return s.find(k.literal) != std::string_view::npos; });
}

std::vector<Keyword> keywords() {
  std::vector<Keyword> k = {
      {"NVRM"},                         // the driver's own lines, Xid
      {"AER:", false, true},            // PCIe AER
      {"Bus Error: sev", false, true},  // "PCIe Bus Error: severity=", port or device
      {"Xid"},                          // SXid
      // Each stand-in is a piece of several of the pattern table's literals,
      // which would otherwise be keywords one by one: vectorscan scans with up
      // to about 15 literals at 6-10 GB/s, with 25 at 3 (bench/README.md,
      // logs_scan). A hit counts only where one of those literals surrounds
      // it, so noise that holds the piece ("Port module event: module 1" from
      // mlx5, 138,000 times in the bench's mixed log) costs a compare, not a
      // decode of its line.
      // "Unknown symbol", "disagrees about version of symbol"
      {"ymbol", true},
      // "Module nvidia not found", "... unsigned module ...", "module verification"
      {"odule", true},
      {"NVSwitch"},  // the fabric manager's NVSwitch lines
      // Shorter than their patterns' needles: vectorscan keys on a literal's
      // last bytes, and a literal that ends in a common word ("... system",
      // "... driver version", "... by service") makes it check the text at
      // every such word. "Detected Pre-NVL5 system" alone took the scan of
      // the bench's journald log from 13 to 3.9 GB/s; "Pre-NVL5" left it at 13.
      {"Loaded the UVM", true},             // "Loaded the UVM driver"
      {"could not insert 'nvidia'", true},  // "...: Key was rejected by service"
      {"Pre-NVL5", true},                   // "Detected Pre-NVL5 system"
      {"don't match", true},                // "... don't match with driver version"
      // "nvidia-nvswitch0: open (major=510)": with its '=' the literal made
      // the scan of the bench's audit log (every field "key=value") 8.1
      // GB/s, where this leaves it at 10.5.
      {"open (major", true},
      // "nvidia-peermem nv_get_p2p_free_callback:127 ERROR ...": rare bytes,
      // where "nvidia-peermem" cost 10-25 % of the scan on every bench log.
      {"p2p_free_callback"},
  };
  const std::vector<Keyword> base = k;
  for (const LogPattern& p : log_patterns()) {
    if (contains_keyword(p.prefix, base) || contains_keyword(p.needle, base)) continue;
    std::string lit = *p.needle ? p.needle : p.prefix;
    bool known =
        std::any_of(k.begin(), k.end(), [&](const Keyword& w) { return w.literal == lit; });
    if (!lit.empty() && !known) k.push_back({lit});
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
  std::vector<std::vector<Confirm>> confirm;  // by keyword id; empty: every hit counts
  std::vector<bool> opens_aer;                // by keyword id
};

// Built once, on first use (thread-safe), and shared by every finder.
const Prefilter& prefilter() {
  static const Prefilter p = [] {
    Prefilter out;
    std::vector<std::string> escaped;
    std::vector<const char*> patterns;
    std::vector<unsigned> flags, ids;
    for (const Keyword& k : keywords()) {
      out.confirm.push_back(k.stand_in ? confirms_of(k.literal) : std::vector<Confirm>{});
      out.opens_aer.push_back(k.opens_aer);
      std::string e;
      for (char c : k.literal) {
        if (!std::isalnum(static_cast<unsigned char>(c))) e += '\\';
        e += c;
      }
      escaped.push_back(e);
      flags.push_back(0);
      ids.push_back(static_cast<unsigned>(ids.size()));
    }
    for (const auto& e : escaped) patterns.push_back(e.c_str());
    hs_compile_error_t* err = nullptr;
    if (hs_compile_multi(patterns.data(), flags.data(), ids.data(),
                         static_cast<unsigned>(patterns.size()), HS_MODE_BLOCK, nullptr, &out.db,
                         &err) != HS_SUCCESS) {
      hs_free_compile_error(err);
      out.db = nullptr;  // fixed literals: cannot happen; the finder then keeps every line
    }
    return out;
  }();
  return p;
}

int on_hit(unsigned id, unsigned long long, unsigned long long to, unsigned, void* p);

// Only a line's message is looked at here, never its time.
constexpr int kAnyYear = 1970;

}  // namespace

struct CandidateFinder::Impl {
  // Taken on the first text: a scanner that reads kmsg records only never
  // compiles the prefilter.
  const Prefilter* pf = nullptr;
  hs_scratch_t* scratch = nullptr;
  uint64_t offset = 0;       // of the next piece in the whole text
  uint64_t captured_to = 0;  // the lines kept end here (in the whole text)
  int pending = 0;           // detail candidates still to keep at the next piece's start
  CandidateLines out;
  // The piece being scanned and the stretch of it given to hs_scan.
  std::string_view text;
  size_t chunk = 0;

  // Keeps the line [from, to) of the piece.
  void keep(size_t from, size_t to, bool hit) {
    out.lines.push_back({offset + from, out.text.size(), to - from, hit});
    out.text.append(text.substr(from, to - from));
    captured_to = offset + to + 1;
  }

  // Keeps the lines from `from` (a line's start in the piece) that have the
  // form of AER detail lines as detail candidates, up to n of them, passing
  // over those kept already; if the piece ends first, the next one's first
  // lines go on.
  void details(size_t from, int n) {
    while (n > 0 && from < text.size()) {
      size_t nl = text.find('\n', from);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view l = text.substr(from, nl - from);
      if (!may_be_aer_detail(parse_log_line(l, kAnyYear).message)) return;
      if (offset + from >= captured_to) keep(from, nl, false);
      from = nl + 1;
      --n;
    }
    pending = std::max(pending, n);
  }

  // A keyword whose last byte is at `at` in the piece.
  void hit(size_t at, bool opens_aer) {
    size_t line_end;
    if (offset + at < captured_to) {
      // On a line kept already (a detail candidate; another keyword of a
      // hit line): it is a hit line.
      auto it = std::upper_bound(
          out.lines.begin(), out.lines.end(), offset + at,
          [](uint64_t pos, const CandidateLines::Line& l) { return pos < l.offset; });
      if (it == out.lines.begin()) return;  // cannot happen: kept lines cover it
      --it;
      it->hit = true;
      line_end = static_cast<size_t>(it->offset - offset) + it->size;
    } else {
      const char* base = text.data();
      size_t floor = captured_to > offset ? static_cast<size_t>(captured_to - offset) : 0;
      size_t begin = at;
      while (begin > floor && base[begin - 1] != '\n') --begin;
      line_end = text.find('\n', at);
      if (line_end == std::string_view::npos) line_end = text.size();
      keep(begin, line_end, true);
    }
    if (opens_aer) details(line_end + 1, kAerDetailLines);
  }

  // Does one of `cs` lie around a stand-in's hit that ends at `end` in the piece?
  bool confirmed(const std::vector<Confirm>& cs, size_t end) const {
    return std::any_of(cs.begin(), cs.end(), [&](const Confirm& c) {
      if (end < c.keyword_end) return false;
      size_t start = end - c.keyword_end;
      return start + c.literal.size() <= text.size() &&
             std::memcmp(text.data() + start, c.literal.data(), c.literal.size()) == 0;
    });
  }
};

namespace {

int on_hit(unsigned id, unsigned long long, unsigned long long to, unsigned, void* p) {
  auto* f = static_cast<CandidateFinder::Impl*>(p);
  size_t end = f->chunk + static_cast<size_t>(to);
  const std::vector<Confirm>& cs = f->pf->confirm[id];
  if (!cs.empty() && !f->confirmed(cs, end)) return 0;
  f->hit(end - 1, f->pf->opens_aer[id]);
  return 0;
}

}  // namespace

CandidateFinder::CandidateFinder(uint64_t offset) : impl_(std::make_unique<Impl>()) {
  impl_->offset = impl_->captured_to = offset;
  clear();
}

CandidateFinder::~CandidateFinder() {
  if (impl_->scratch) hs_free_scratch(impl_->scratch);
}

void CandidateFinder::add_text(std::string_view text) {
  Impl& f = *impl_;
  if (f.pf == nullptr) {
    f.pf = &prefilter();
    if (f.pf->db != nullptr && hs_alloc_scratch(f.pf->db, &f.scratch) != HS_SUCCESS) {
      f.scratch = nullptr;
    }
  }
  f.text = text;
  f.chunk = 0;
  if (f.pending > 0) {
    int n = f.pending;
    f.pending = 0;
    f.details(0, n);
  }
  if (f.scratch == nullptr) {  // no prefilter (cannot happen): every line is a candidate
    for (size_t from = 0; from < text.size();) {
      size_t nl = text.find('\n', from);
      if (nl == std::string_view::npos) nl = text.size();
      if (f.offset + from >= f.captured_to) f.keep(from, nl, true);
      from = nl + 1;
    }
  } else {
    // hs_scan takes an unsigned length: scan in chunks that end at a newline,
    // so no keyword straddles two chunks.
    constexpr size_t kChunk = size_t{1} << 30;
    while (f.chunk < text.size()) {
      size_t len = std::min(kChunk, text.size() - f.chunk);
      if (f.chunk + len < text.size()) {
        size_t nl = text.rfind('\n', f.chunk + len);
        if (nl != std::string_view::npos && nl > f.chunk) len = nl + 1 - f.chunk;
      }
      hs_scan(f.pf->db, text.data() + f.chunk, static_cast<unsigned>(len), 0, f.scratch, on_hit,
              &f);
      f.chunk += len;
    }
  }
  f.offset += text.size();
  f.out.end = f.offset;
  f.text = {};
}

void CandidateFinder::expect_continuation() { impl_->pending = kAerDetailLines; }

void CandidateFinder::pass_over(uint64_t bytes) {
  impl_->offset += bytes;
  impl_->out.end = impl_->offset;
  impl_->pending = 0;  // an AER group does not go on past a line that is no detail line
}

uint64_t CandidateFinder::offset() const { return impl_->offset; }

void CandidateFinder::skip_to(uint64_t offset) {
  impl_->offset = impl_->captured_to = offset;
  impl_->pending = 0;
  clear();
}

const CandidateLines& CandidateFinder::found() const { return impl_->out; }

// The one place a batch starts: empty, at the current offset.
void CandidateFinder::clear() {
  CandidateLines& o = impl_->out;
  o.text.clear();
  o.lines.clear();
  o.begin = o.end = impl_->offset;
}

CandidateLines CandidateFinder::take() {
  CandidateLines taken = std::move(impl_->out);
  impl_->out = CandidateLines{};
  clear();  // the next batch starts here
  return taken;
}

}  // namespace gd
