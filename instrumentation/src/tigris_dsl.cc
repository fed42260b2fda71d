#include "tigris_dsl.h"

#include <array>
#include <cctype>
#include <vector>

namespace perfhat::tigris {
namespace {

constexpr std::array<std::string_view, kCriterionCount> kCriterionNames = {
    "frequent",      "maintainable",    "expensive",  "changeable", "error-prone",
    "usage-pattern", "state-variation", "concurrent", "latent"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

enum class Tok { kWord, kOp, kLParen, kRParen, kEnd, kBad };

struct Token {
  Tok kind = Tok::kEnd;
  size_t offset = 0;
  std::string text;
  Op op = Op::kUnion;
};

std::optional<Modifier> modifier_from(std::string_view w) {
  std::string l = lower(w);
  if (l == "more") return Modifier::kMore;
  if (l == "less") return Modifier::kLess;
  if (l == "most") return Modifier::kMost;
  if (l == "least") return Modifier::kLeast;
  return std::nullopt;
}

std::optional<Op> word_op(std::string_view w) {
  std::string l = lower(w);
  if (l == "u" || l == "union") return Op::kUnion;
  if (l == "intersect") return Op::kIntersect;
  if (l == "minus") return Op::kMinus;
  return std::nullopt;
}

bool is_keyword(std::string_view w) {
  return criterion_from_string(w) || modifier_from(w) || word_op(w);
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    while (true) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      Token t;
      t.offset = pos_;
      if (pos_ >= s_.size()) {
        t.kind = Tok::kEnd;
        out.push_back(t);
        return out;
      }
      std::string_view rest = s_.substr(pos_);
      auto op_tok = [&](Op o, size_t len) {
        t.kind = Tok::kOp;
        t.op = o;
        t.text = std::string(rest.substr(0, len));
        pos_ += len;
      };
      if (rest.starts_with("\xE2\x88\xAA")) {  // ∪
        op_tok(Op::kUnion, 3);
      } else if (rest.starts_with("\xE2\x88\xA9")) {  // ∩
        op_tok(Op::kIntersect, 3);
      } else if (rest[0] == '\\' || rest[0] == '-') {
        op_tok(Op::kMinus, 1);
      } else if (rest[0] == '^') {
        op_tok(Op::kIntersect, 1);
      } else if (rest[0] == '(') {
        t.kind = Tok::kLParen;
        t.text = "(";
        ++pos_;
      } else if (rest[0] == ')') {
        t.kind = Tok::kRParen;
        t.text = ")";
        ++pos_;
      } else if (is_word_char(rest[0])) {
        // A word may contain inner hyphens (error-prone, usage-pattern). If the hyphenated word
        // is not a keyword but a prefix is, the hyphen is the minus operator: "expensive-latent".
        size_t end = 0;
        while (end < rest.size() &&
               (is_word_char(rest[end]) ||
                (rest[end] == '-' && end + 1 < rest.size() && is_word_char(rest[end + 1])))) {
          ++end;
        }
        std::string_view word = rest.substr(0, end);
        if (!is_keyword(word)) {
          for (size_t cut = word.rfind('-'); cut != std::string_view::npos && cut > 0;
               cut = word.rfind('-', cut - 1)) {
            if (is_keyword(word.substr(0, cut))) {
              word = word.substr(0, cut);
              break;
            }
            if (cut == 0) break;
          }
        }
        t.text = std::string(word);
        if (auto o = word_op(word)) {
          t.kind = Tok::kOp;
          t.op = *o;
        } else {
          t.kind = Tok::kWord;
        }
        pos_ += word.size();
      } else {
        t.kind = Tok::kBad;
        // Report one whole UTF-8 character.
        size_t len = 1;
        unsigned char c = static_cast<unsigned char>(rest[0]);
        if (c >= 0xF0)
          len = 4;
        else if (c >= 0xE0)
          len = 3;
        else if (c >= 0xC0)
          len = 2;
        t.text = std::string(rest.substr(0, std::min(len, rest.size())));
        out.push_back(t);
        return out;
      }
      out.push_back(t);
    }
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

size_t column_of(std::string_view s, size_t offset) {
  size_t col = 1;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) ++col;
  }
  return col;
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEnd:
      return "end of input";
    default:
      return "'" + t.text + "'";
  }
}

class Parser {
 public:
  Parser(std::string_view src, std::vector<Token> toks) : src_(src), toks_(std::move(toks)) {}

  ParseResult run() {
    ParseResult r;
    if (toks_.back().kind == Tok::kBad) {
      fail(toks_.back(), "unexpected character " + describe(toks_.back()));
    }
    if (!error_) {
      auto root = filter();
      if (!error_ && peek().kind != Tok::kEnd) {
        fail(peek(), peek().kind == Tok::kRParen
                         ? "unmatched ')'"
                         : "expected an operator (∪ ∩ \\), found " + describe(peek()));
      }
      if (!error_) r.root = std::move(root);
    }
    r.error = error_;
    return r;
  }

 private:
  const Token& peek() const { return toks_[i_]; }
  const Token& next() { return toks_[i_ < toks_.size() - 1 ? i_++ : i_]; }

  void fail(const Token& t, std::string msg) {
    if (error_) return;
    ParseError e;
    e.offset = t.offset;
    e.column = column_of(src_, t.offset);
    e.message = std::move(msg);
    error_ = e;
  }

  // filter := term (op term)*   -- equal precedence, left-associative.
  std::unique_ptr<Node> filter() {
    auto lhs = term();
    while (!error_ && peek().kind == Tok::kOp) {
      const Token& opt = next();
      auto rhs = term();
      if (error_) return nullptr;
      auto n = std::make_unique<Node>();
      n->kind = Node::Kind::kBinary;
      n->op = opt.op;
      n->offset = opt.offset;
      n->lhs = std::move(lhs);
      n->rhs = std::move(rhs);
      lhs = std::move(n);
    }
    return lhs;
  }

  // term := '(' filter ')' | [modifier] criterion
  std::unique_ptr<Node> term() {
    if (++depth_ > 200) {
      fail(peek(), "expression nested too deeply");
      return nullptr;
    }
    struct DepthGuard {
      int& d;
      ~DepthGuard() { --d; }
    } guard{depth_};
    const Token& t = peek();
    if (t.kind == Tok::kLParen) {
      next();
      auto inner = filter();
      if (error_) return nullptr;
      if (peek().kind != Tok::kRParen) {
        fail(peek(), "expected ')' to close '(' at column " +
                         std::to_string(column_of(src_, t.offset)) + ", found " + describe(peek()));
        return nullptr;
      }
      next();
      return inner;
    }
    if (t.kind != Tok::kWord) {
      fail(t, "expected a criterion, modifier or '(', found " + describe(t));
      return nullptr;
    }
    auto n = std::make_unique<Node>();
    n->offset = t.offset;
    if (auto m = modifier_from(t.text)) {
      n->modifier = *m;
      next();
      const Token& c = peek();
      if (c.kind != Tok::kWord || !criterion_from_string(c.text)) {
        fail(c, "expected a criterion after '" + t.text + "', found " + describe(c) +
                    " (criteria: frequent, maintainable, expensive, changeable, error-prone, "
                    "usage-pattern, state-variation, concurrent, latent)");
        return nullptr;
      }
      n->criterion = *criterion_from_string(c.text);
      next();
      return n;
    }
    if (auto c = criterion_from_string(t.text)) {
      n->criterion = *c;
      next();
      return n;
    }
    fail(t, "unknown word '" + t.text +
                "' (modifiers: more, less, most, least; criteria: frequent, maintainable, "
                "expensive, changeable, error-prone, usage-pattern, state-variation, concurrent, "
                "latent)");
    return nullptr;
  }

  std::string_view src_;
  std::vector<Token> toks_;
  size_t i_ = 0;
  int depth_ = 0;
  std::optional<ParseError> error_;
};

}  // namespace

std::string_view to_string(Criterion c) { return kCriterionNames[static_cast<int>(c)]; }

std::string_view to_string(Modifier m) {
  switch (m) {
    case Modifier::kMore:
      return "more";
    case Modifier::kLess:
      return "less";
    case Modifier::kMost:
      return "most";
    case Modifier::kLeast:
      return "least";
    case Modifier::kNone:
      break;
  }
  return "";
}

std::string_view to_string(Op o) {
  switch (o) {
    case Op::kUnion:
      return "\xE2\x88\xAA";
    case Op::kIntersect:
      return "\xE2\x88\xA9";
    case Op::kMinus:
      break;
  }
  return "\\";
}

std::optional<Criterion> criterion_from_string(std::string_view s) {
  std::string l = lower(s);
  if (l == "usagepattern") return Criterion::kUsagePattern;
  for (int i = 0; i < kCriterionCount; ++i) {
    if (l == kCriterionNames[i]) return static_cast<Criterion>(i);
  }
  return std::nullopt;
}

std::string ParseError::to_string() const {
  return "column " + std::to_string(column) + ": " + message;
}

ParseResult parse(std::string_view text) {
  Lexer lx(text);
  Parser p(text, lx.run());
  return p.run();
}

std::string print(const Node& n) {
  if (n.kind == Node::Kind::kLeaf) {
    std::string out(to_string(n.modifier));
    if (!out.empty()) out += ' ';
    out += to_string(n.criterion);
    return out;
  }
  return "(" + print(*n.lhs) + " " + std::string(to_string(n.op)) + " " + print(*n.rhs) + ")";
}

unsigned criteria_used(const Node& n) {
  if (n.kind == Node::Kind::kLeaf) return 1u << static_cast<int>(n.criterion);
  return criteria_used(*n.lhs) | criteria_used(*n.rhs);
}

}  // namespace perfhat::tigris
