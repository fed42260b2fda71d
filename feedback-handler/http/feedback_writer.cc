#include "feedback-handler/http/feedback_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/feedback_fields.h"
#include "feedback-handler/ingest/span_key.h"
#include "feedback-handler/util/parallel.h"

namespace perfhat::handler {
namespace {

// Appends into one string through a raw cursor: the document is ~700 bytes per item, and
// per-character std::string::push_back (a capacity check each) was most of its cost.
class Writer {
 public:
  // Writes from the start of `out`, whose current bytes are scratch space (sized by a guess).
  // `continuing`: the text goes after earlier values of an array (the first one gets a comma).
  explicit Writer(std::string& out, bool continuing = false)
      : out_(out), len_(0), first_(!continuing) {}
  ~Writer() { out_.resize(len_); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

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
      raw("null");
      return;
    }
    char* p = room(32 + 2);
    char* end;
    // Whole numbers (the store's durations are whole nanoseconds) in integer form: the shortest
    // double form is the same digits, and finding it costs several times more.
    if (std::fabs(v) < 1e15 && v == std::trunc(v)) {
      end = std::to_chars(p, p + 32, static_cast<int64_t>(v)).ptr;
    } else {
      end = std::to_chars(p, p + 32, v).ptr;
    }
    // Keep doubles recognisable as such ("1.0", as nlohmann writes them).
    bool plain = true;
    for (char* c = p; c < end; ++c) {
      if (*c == '.' || *c == 'e' || *c == 'E') {
        plain = false;
        break;
      }
    }
    if (plain) {
      *end++ = '.';
      *end++ = '0';
    }
    len_ = static_cast<size_t>(end - out_.data());
  }
  void num(uint64_t v) { integer(v); }
  void num(int v) { integer(v); }
  void key(std::string_view k) {
    // field names are plain ASCII literals: `,"name":` in one copy
    char* p = room(k.size() + 4);
    char* q = p;
    if (!first_) *q++ = ',';
    *q++ = '"';
    std::memcpy(q, k.data(), k.size());
    q += k.size();
    *q++ = '"';
    *q++ = ':';
    len_ += static_cast<size_t>(q - p);
    first_ = true;  // the value follows without a comma
  }
  void open(char c) {
    sep();
    put(c);
    first_ = true;
  }
  void close(char c) {
    put(c);
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
  // At least n writable bytes at out_.data() + len_.
  char* room(size_t n) {
    if (out_.size() - len_ < n) out_.resize(std::max(out_.size() * 2, len_ + n + 4096));
    return out_.data() + len_;
  }
  void put(char c) {
    *room(1) = c;
    ++len_;
  }
  void raw(std::string_view s) {
    std::memcpy(room(s.size()), s.data(), s.size());
    len_ += s.size();
  }
  void sep() {
    if (!first_) put(',');
  }
  template <typename T>
  void integer(T v) {
    char* p = room(24);
    len_ = static_cast<size_t>(std::to_chars(p, p + 24, v).ptr - out_.data());
  }
  void escaped(std::string_view s) {
    put('"');
    size_t run = 0;  // start of the stretch that needs no escaping
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      raw(s.substr(run, i - run));
      run = i + 1;
      switch (c) {
        case '"':
          raw("\\\"");
          break;
        case '\\':
          raw("\\\\");
          break;
        case '\b':
          raw("\\b");
          break;
        case '\f':
          raw("\\f");
          break;
        case '\n':
          raw("\\n");
          break;
        case '\r':
          raw("\\r");
          break;
        case '\t':
          raw("\\t");
          break;
        default: {
          static const char* hex = "0123456789abcdef";
          const char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
          raw(std::string_view(u, 6));
        }
      }
    }
    raw(s.substr(run));
    put('"');
  }
  std::string& out_;
  size_t len_;  // bytes written; out_ is longer (scratch) until the destructor trims it
  bool first_;
};

// Writes the fields describe() (common/feedback_fields.h) names.
class StreamFields {
 public:
  explicit StreamFields(Writer& w) : w_(w) {}
  template <typename T>
  void field(std::string_view name, const T& v) {
    w_.field(name, v);
  }
  template <typename T>
  void object(std::string_view name, const T& v) {
    w_.key(name);
    write(v);
  }
  template <typename T>
  void list(std::string_view name, const std::vector<T>& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      w_.strings(name, v);
    } else {
      w_.key(name);
      w_.open('[');
      for (const T& e : v) {
        w_.item();
        write(e);
      }
      w_.close(']');
    }
  }
  template <typename T>
  void write(const T& v) {
    w_.open('{');
    describe(v, *this);
    w_.close('}');
  }

 private:
  Writer& w_;
};

void item(Writer& w, const FeedbackItem& v) {
  StreamFields out(w);
  out.write(v);
}

}  // namespace

namespace {

// The pieces of `r`: chunks of items on `team`'s threads (or threads started here). `release`
// (`r` itself, when the caller gives it up): each chunk frees its items once written, on the
// thread that wrote them (freeing 10,000 items took ~1.6 ms on the server thread otherwise).
std::vector<std::string> writePieces(const BatchGetResponse& r, size_t threads, ChunkTeam* team,
                                     BatchGetResponse* release) {
  // Items of a large response are written in chunks on parallel threads.
  constexpr size_t kItemsPerChunk = 1024;
  constexpr size_t kBytesPerItem = 800;  // a first guess of the buffer size; it grows as needed
  const size_t chunks = chunkCount(r.items.size(), kItemsPerChunk, threads);
  std::vector<std::string> pieces(chunks + 2);  // head, chunks, tail
  {
    std::string& head = pieces.front();
    head.resize(64 + r.cursor.size());
    Writer w(head);
    w.open('{');
    if (!r.cursor.empty()) w.field("cursor", r.cursor);
    w.key("items");
    w.open('[');
  }
  forEachChunk(team, r.items.size(), chunks, [&](size_t c, size_t begin, size_t end) {
    std::string& piece = pieces[1 + c];
    piece.resize((end - begin) * kBytesPerItem);
    {
      Writer w(piece, /*continuing=*/c > 0);
      for (size_t i = begin; i < end; ++i) {
        w.item();
        item(w, r.items[i]);
      }
    }
    if (release) {
      for (size_t i = begin; i < end; ++i) release->items[i] = FeedbackItem{};
    }
  });
  {
    std::string& tail = pieces.back();
    tail.resize(64 + r.missing.size() * 40);
    Writer w(tail);
    w.close(']');
    w.strings("missing", r.missing);
    if (!r.unprobed.empty()) StreamFields(w).list("unprobed", r.unprobed);
    w.close('}');
  }
  return pieces;
}

}  // namespace

std::vector<std::string> writeBatchGetResponsePieces(const BatchGetResponse& r, int threads) {
  return writePieces(r, requestThreads(threads), nullptr, /*release=*/nullptr);
}

std::vector<std::string> writeBatchGetResponsePieces(BatchGetResponse&& r, ChunkTeam& team) {
  return writePieces(r, team.threads(), &team, /*release=*/&r);
}

std::string writeBatchGetResponse(const BatchGetResponse& r, int threads) {
  const std::vector<std::string> pieces = writeBatchGetResponsePieces(r, threads);
  size_t size = 0;
  for (const std::string& p : pieces) size += p.size();
  std::string out;
  out.reserve(size);
  for (const std::string& p : pieces) out += p;
  return out;
}

std::string writeFeedbackItem(const FeedbackItem& v) {
  std::string out;
  {
    Writer w(out);
    item(w, v);
  }
  return out;
}

}  // namespace perfhat::handler
