#include "feedback-handler/http/feedback_writer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "feedback-handler/ingest/span_key.h"

namespace perfhat::handler {
namespace {

class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void str(std::string_view s) {
    // Stored strings are sanitized at ingest; anything else that is not UTF-8 is made valid
    // rather than emitting a document clients cannot parse.
    for (unsigned char c : s) {
      if (c >= 0x80) return escaped(sanitizeUtf8(std::string(s)));
    }
    escaped(s);
  }
  void num(double v) {
    if (!std::isfinite(v)) {  // same as nlohmann: non-finite numbers are null
      out_ += "null";
      return;
    }
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
    out_ += s;
    // Keep doubles recognisable as such ("1.0", as nlohmann writes them).
    if (s.find_first_of(".eE") == std::string_view::npos) out_ += ".0";
  }
  void num(uint64_t v) { integer(v); }
  void num(int v) { integer(v); }
  void key(std::string_view k) {
    sep();
    out_ += '"';
    out_ += k;  // field names are plain ASCII literals
    out_ += "\":";
    first_ = true;  // the value follows without a comma
  }
  void open(char c) {
    sep();
    out_ += c;
    first_ = true;
  }
  void close(char c) {
    out_ += c;
    first_ = false;
  }
  // Before a value in an array (keys handle their own separator).
  void item() {
    sep();
    first_ = true;
  }
  void value(std::string_view s) {
    sep();
    str(s);
    first_ = false;
  }
  template <typename T>
  void field(std::string_view k, const T& v) {
    key(k);
    if constexpr (std::is_same_v<T, std::string>) {
      str(v);
    } else {
      num(v);
    }
    first_ = false;
  }
  void strings(std::string_view k, const std::vector<std::string>& v) {
    key(k);
    open('[');
    for (const auto& s : v) value(s);
    close(']');
  }

 private:
  void sep() {
    if (!first_) out_ += ',';
  }
  template <typename T>
  void integer(T v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }
  void escaped(std::string_view s) {
    out_ += '"';
    for (char ch : s) {
      auto c = static_cast<unsigned char>(ch);
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\t':
          out_ += "\\t";
          break;
        default:
          if (c < 0x20) {
            static const char* hex = "0123456789abcdef";
            out_ += "\\u00";
            out_ += hex[c >> 4];
            out_ += hex[c & 15];
          } else {
            out_ += ch;
          }
      }
    }
    out_ += '"';
  }
  std::string& out_;
  bool first_ = true;
};

void window(Writer& w, const TimeWindow& t) {
  w.key("window");
  w.open('{');
  w.field("from", t.from);
  w.field("to", t.to);
  w.close('}');
}

void stats(Writer& w, std::string_view name, const Stats& s) {
  w.key(name);
  w.open('{');
  w.field("count", s.count);
  w.field("errors", s.errors);
  w.field("max_ns", s.max_ns);
  w.field("mean_ns", s.mean_ns);
  w.field("min_ns", s.min_ns);
  w.field("p50_ns", s.p50_ns);
  w.field("p90_ns", s.p90_ns);
  w.field("p95_ns", s.p95_ns);
  w.field("p99_ns", s.p99_ns);
  w.field("rate_per_s", s.rate_per_s);
  window(w, s.window);
  w.close('}');
}

// Field order is alphabetical, as in nlohmann's std::map-backed objects.
void item(Writer& w, const FeedbackItem& v) {
  w.open('{');
  if (v.baseline) stats(w, "baseline", *v.baseline);
  w.key("callsites");
  w.open('[');
  for (const CallSiteStats& c : v.callsites) {
    w.item();
    w.open('{');
    w.field("caller", c.caller);
    if (c.caller_input_size) w.field("caller_input_size", *c.caller_input_size);
    w.field("caller_rate_per_s", c.caller_rate_per_s);
    w.field("calls_per_parent", c.calls_per_parent);
    w.field("count", c.count);
    w.field("mean_ns", c.mean_ns);
    w.field("p50_ns", c.p50_ns);
    w.field("p90_ns", c.p90_ns);
    w.field("p99_ns", c.p99_ns);
    w.close('}');
  }
  w.close(']');
  if (!v.file.empty()) w.field("file", v.file);
  if (!v.hosts.empty()) w.strings("hosts", v.hosts);
  w.field("key", v.key);
  if (!v.last_seen.empty()) w.field("last_seen", v.last_seen);
  if (v.line != 0) w.field("line", v.line);
  w.key("loops");
  w.open('[');
  for (const LoopStats& l : v.loops) {
    w.item();
    w.open('{');
    w.field("count", l.count);
    w.field("iterations_mean", l.iterations_mean);
    w.field("iterations_p90", l.iterations_p90);
    w.field("line", l.line);
    w.field("ordinal", l.ordinal);
    w.close('}');
  }
  w.close(']');
  if (!v.mangled.empty()) w.field("mangled", v.mangled);
  if (v.result_size) {
    w.key("result_size");
    w.open('{');
    w.field("count", v.result_size->count);
    w.field("max", v.result_size->max);
    w.field("mean", v.result_size->mean);
    w.field("p90", v.result_size->p90);
    w.close('}');
  }
  if (!v.services.empty()) w.strings("services", v.services);
  if (v.stats) stats(w, "stats", *v.stats);
  w.strings("versions", v.versions);
  w.close('}');
}

}  // namespace

std::string writeBatchGetResponse(const BatchGetResponse& r) {
  std::string out;
  out.reserve(64 + r.items.size() * 700 + r.missing.size() * 40);
  Writer w(out);
  w.open('{');
  if (!r.cursor.empty()) w.field("cursor", r.cursor);
  w.key("items");
  w.open('[');
  for (const FeedbackItem& v : r.items) {
    w.item();
    item(w, v);
  }
  w.close(']');
  w.strings("missing", r.missing);
  w.close('}');
  return out;
}

std::string writeFeedbackItem(const FeedbackItem& v) {
  std::string out;
  Writer w(out);
  item(w, v);
  return out;
}

}  // namespace perfhat::handler
