// Open documents: text, version, and conversion between LSP positions (UTF-16 code units by
// default, UTF-8 when negotiated) and the UTF-8 byte columns the analysis uses.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/analysis/snapshot.h"
#include "server/lsp/protocol.h"

namespace perfhat::server {

enum class PositionEncoding { Utf16, Utf8 };

// Byte offsets of line starts, for O(log n) position conversion. Lines end at '\n'; a '\r'
// before it is part of the line's content (clients count it that way too).
class LineTable {
 public:
  explicit LineTable(std::string_view text);
  size_t lineCount() const { return starts_.size(); }
  size_t lineStart(size_t line) const { return starts_[line]; }
  // Content of `line` without its terminating '\n'.
  std::string_view line(std::string_view text, size_t line) const;

 private:
  std::vector<size_t> starts_;
};

// LSP position -> byte offset into `text`. Out-of-range lines/characters clamp to the end of the
// document/line (as the spec asks); a position inside a multi-unit character snaps to its start.
size_t toOffset(std::string_view text, const LineTable& lines, lsp::Position p,
                PositionEncoding enc);
// Byte position (0-based line, UTF-8 byte column) -> LSP position in `enc`.
lsp::Position toLsp(std::string_view text, const LineTable& lines, analysis::Position p,
                    PositionEncoding enc);
// LSP position -> byte position.
analysis::Position toByte(std::string_view text, const LineTable& lines, lsp::Position p,
                          PositionEncoding enc);

class Document {
 public:
  Document(std::string uri, std::string path, int version, std::string text);

  const std::string& uri() const { return uri_; }
  const std::string& path() const { return path_; }
  int version() const { return version_; }
  const std::string& text() const { return text_; }
  const LineTable& lines() const { return lines_; }

  // Applies didChange events in order. Returns an error message (and leaves the document
  // unchanged) when an incremental range is invalid, e.g. start after end.
  std::optional<std::string> applyChanges(
      int version, const std::vector<lsp::TextDocumentContentChangeEvent>& changes,
      PositionEncoding enc);

  lsp::Position toLsp(analysis::Position p, PositionEncoding enc) const {
    return server::toLsp(text_, lines_, p, enc);
  }
  analysis::Position toByte(lsp::Position p, PositionEncoding enc) const {
    return server::toByte(text_, lines_, p, enc);
  }
  analysis::Range toByteRange(const lsp::Range& r, PositionEncoding enc) const {
    return {toByte(r.start, enc), toByte(r.end, enc)};
  }

 private:
  std::string uri_;
  std::string path_;
  int version_;
  std::string text_;
  LineTable lines_;
};

}  // namespace perfhat::server
