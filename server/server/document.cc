#include "server/server/document.h"

#include <algorithm>

namespace perfhat::server {
namespace {

// Length in bytes of the UTF-8 sequence starting with `lead` (1 for invalid bytes, so broken
// input still advances).
size_t utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// UTF-16 code units of the character whose UTF-8 encoding is `len` bytes long.
int utf16Units(size_t len) { return len == 4 ? 2 : 1; }

}  // namespace

LineTable::LineTable(std::string_view text) {
  starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') starts_.push_back(i + 1);
  }
}

std::string_view LineTable::line(std::string_view text, size_t line) const {
  size_t start = starts_[line];
  size_t end = line + 1 < starts_.size() ? starts_[line + 1] - 1 : text.size();
  return text.substr(start, end - start);
}

size_t toOffset(std::string_view text, const LineTable& lines, lsp::Position p,
                PositionEncoding enc) {
  if (p.line < 0) return 0;
  if (static_cast<size_t>(p.line) >= lines.lineCount()) return text.size();
  std::string_view line = lines.line(text, p.line);
  size_t base = lines.lineStart(p.line);
  if (enc == PositionEncoding::Utf8) {
    size_t col = std::min<size_t>(std::max(p.character, 0), line.size());
    // Snap back to a character boundary.
    while (col > 0 && col < line.size() && (static_cast<unsigned char>(line[col]) & 0xC0) == 0x80) {
      --col;
    }
    return base + col;
  }
  int units = 0;
  size_t i = 0;
  while (i < line.size()) {
    size_t len = std::min(utf8Length(static_cast<unsigned char>(line[i])), line.size() - i);
    int u = utf16Units(len);
    if (units + u > p.character) break;  // inside (or at the start of) this character
    units += u;
    i += len;
  }
  return base + i;
}

lsp::Position toLsp(std::string_view text, const LineTable& lines, analysis::Position p,
                    PositionEncoding enc) {
  if (p.line < 0) return {0, 0};
  if (static_cast<size_t>(p.line) >= lines.lineCount()) {
    size_t last = lines.lineCount() - 1;
    p = {static_cast<int>(last), static_cast<int>(lines.line(text, last).size())};
  }
  std::string_view line = lines.line(text, p.line);
  size_t col = std::min<size_t>(std::max(p.column, 0), line.size());
  if (enc == PositionEncoding::Utf8) return {p.line, static_cast<int>(col)};
  int units = 0;
  size_t i = 0;
  while (i < col) {
    size_t len = std::min(utf8Length(static_cast<unsigned char>(line[i])), line.size() - i);
    units += utf16Units(len);
    i += len;
  }
  return {p.line, units};
}

analysis::Position toByte(std::string_view text, const LineTable& lines, lsp::Position p,
                          PositionEncoding enc) {
  size_t off = toOffset(text, lines, p, enc);
  // Find the line containing `off`.
  size_t lo = 0, hi = lines.lineCount();
  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (lines.lineStart(mid) <= off)
      lo = mid;
    else
      hi = mid;
  }
  return {static_cast<int>(lo), static_cast<int>(off - lines.lineStart(lo))};
}

Document::Document(std::string uri, std::string path, int version, std::string text)
    : uri_(std::move(uri)),
      path_(std::move(path)),
      version_(version),
      text_(std::move(text)),
      lines_(text_) {}

std::optional<std::string> Document::applyChanges(
    int version, const std::vector<lsp::TextDocumentContentChangeEvent>& changes,
    PositionEncoding enc) {
  std::string text = text_;
  LineTable lines = lines_;
  for (const auto& c : changes) {
    if (!c.range) {
      text = c.text;
    } else {
      size_t start = toOffset(text, lines, c.range->start, enc);
      size_t end = toOffset(text, lines, c.range->end, enc);
      if (start > end) {
        return "invalid change range: start (" + std::to_string(c.range->start.line) + ":" +
               std::to_string(c.range->start.character) + ") is after end (" +
               std::to_string(c.range->end.line) + ":" + std::to_string(c.range->end.character) +
               ")";
      }
      text.replace(start, end - start, c.text);
    }
    lines = LineTable(text);
  }
  text_ = std::move(text);
  lines_ = std::move(lines);
  version_ = version;
  return std::nullopt;
}

}  // namespace perfhat::server
