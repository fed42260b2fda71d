#include "server/lsp/protocol.h"

#include "common/json_number.h"

namespace perfhat::lsp {
namespace {

const json* member(const json& j, const char* name) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(name);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

// Walks a dotted path of objects ("textDocument.inlayHint.dynamicRegistration").
const json* path(const json& j, std::initializer_list<const char*> names) {
  const json* cur = &j;
  for (const char* n : names) {
    cur = member(*cur, n);
    if (!cur) return nullptr;
  }
  return cur;
}

bool flag(const json& j, std::initializer_list<const char*> names) {
  const json* v = path(j, names);
  return v && v->is_boolean() && v->get<bool>();
}

}  // namespace

void to_json(json& j, const Position& v) { j = {{"line", v.line}, {"character", v.character}}; }
void from_json(const json& j, Position& v) {
  v.line = integerFrom<int>(j.at("line"));
  v.character = integerFrom<int>(j.at("character"));
  if (v.line < 0 || v.character < 0) throw json::other_error::create(501, "negative position", &j);
}

void to_json(json& j, const Range& v) { j = {{"start", v.start}, {"end", v.end}}; }
void from_json(const json& j, Range& v) {
  v.start = j.at("start").get<Position>();
  v.end = j.at("end").get<Position>();
}

void from_json(const json& j, TextDocumentIdentifier& v) { v.uri = j.at("uri").get<std::string>(); }

void from_json(const json& j, TextDocumentItem& v) {
  v.uri = j.at("uri").get<std::string>();
  v.language_id = j.value("languageId", "");
  v.version = integerOr(j, "version", 0);
  v.text = j.at("text").get<std::string>();
}

void from_json(const json& j, VersionedTextDocumentIdentifier& v) {
  v.uri = j.at("uri").get<std::string>();
  const json* ver = member(j, "version");
  v.version = ver ? integerFrom<int>(*ver) : 0;
}

void from_json(const json& j, TextDocumentContentChangeEvent& v) {
  if (const json* r = member(j, "range")) v.range = r->get<Range>();
  v.text = j.at("text").get<std::string>();
}

void from_json(const json& j, DidOpenTextDocumentParams& v) {
  v.text_document = j.at("textDocument").get<TextDocumentItem>();
}

void from_json(const json& j, DidChangeTextDocumentParams& v) {
  v.text_document = j.at("textDocument").get<VersionedTextDocumentIdentifier>();
  v.content_changes = j.at("contentChanges").get<std::vector<TextDocumentContentChangeEvent>>();
}

void from_json(const json& j, TextDocumentPositionParams& v) {
  v.text_document = j.at("textDocument").get<TextDocumentIdentifier>();
  v.position = j.at("position").get<Position>();
}

void from_json(const json& j, RangeParams& v) {
  v.text_document = j.at("textDocument").get<TextDocumentIdentifier>();
  v.range = j.at("range").get<Range>();
}

void from_json(const json& j, DocumentParams& v) {
  v.text_document = j.at("textDocument").get<TextDocumentIdentifier>();
}

void from_json(const json& j, ExecuteCommandParams& v) {
  v.command = j.at("command").get<std::string>();
  if (const json* a = member(j, "arguments")) {
    if (!a->is_array()) throw json::type_error::create(302, "arguments must be an array", &j);
    v.arguments = *a;
  }
}

void from_json(const json& j, CancelParams& v) {
  v.id = j.at("id");
  if (!v.id.is_number_integer() && !v.id.is_string()) {
    throw json::type_error::create(302, "id must be a number or a string", &j);
  }
}

void from_json(const json& j, ClientCapabilities& v) {
  v.inlay_hint = path(j, {"textDocument", "inlayHint"}) != nullptr;
  v.inlay_hint_refresh = flag(j, {"workspace", "inlayHint", "refreshSupport"});
  v.code_lens_refresh = flag(j, {"workspace", "codeLens", "refreshSupport"});
  v.work_done_progress = flag(j, {"window", "workDoneProgress"});
  v.show_document = flag(j, {"window", "showDocument", "support"});
  if (const json* formats = path(j, {"textDocument", "hover", "contentFormat"})) {
    v.hover_markdown = false;
    if (formats->is_array()) {
      for (const auto& f : *formats) v.hover_markdown |= f == "markdown";
    }
  }
  if (const json* enc = path(j, {"general", "positionEncodings"}); enc && enc->is_array()) {
    for (const auto& e : *enc) v.utf8_positions |= e == "utf-8";
  }
}

void from_json(const json& j, InitializeParams& v) {
  if (const json* r = member(j, "rootUri"); r && r->is_string()) v.root_uri = r->get<std::string>();
  if (const json* r = member(j, "rootPath"); r && r->is_string()) {
    v.root_path = r->get<std::string>();
  }
  if (!v.root_uri) {
    if (const json* f = member(j, "workspaceFolders"); f && f->is_array() && !f->empty()) {
      if (const json* u = member((*f)[0], "uri"); u && u->is_string()) {
        v.root_uri = u->get<std::string>();
      }
    }
  }
  if (const json* o = member(j, "initializationOptions")) v.initialization_options = *o;
  if (const json* c = member(j, "capabilities")) v.capabilities = c->get<ClientCapabilities>();
}

void to_json(json& j, const InlayHint& v) {
  j = {{"position", v.position}, {"label", v.label}};
  if (v.kind) j["kind"] = v.kind;
  if (!v.tooltip.empty()) j["tooltip"] = v.tooltip;
  if (v.padding_left) j["paddingLeft"] = true;
  if (v.padding_right) j["paddingRight"] = true;
}
void from_json(const json& j, InlayHint& v) {
  v.position = j.at("position").get<Position>();
  const json& label = j.at("label");
  if (label.is_string()) {
    v.label = label.get<std::string>();
  } else {  // InlayHintLabelPart[]
    v.label.clear();
    for (const auto& part : label) v.label += part.at("value").get<std::string>();
  }
  v.kind = integerOr(j, "kind", 0);
  if (const json* t = member(j, "tooltip")) {
    v.tooltip = t->is_string() ? t->get<std::string>() : t->value("value", "");
  }
  v.padding_left = j.value("paddingLeft", false);
  v.padding_right = j.value("paddingRight", false);
}

void to_json(json& j, const Hover& v) {
  j = {{"contents", {{"kind", v.markdown_kind ? "markdown" : "plaintext"}, {"value", v.markdown}}}};
  if (v.range) j["range"] = *v.range;
}

void to_json(json& j, const Command& v) {
  j = {{"title", v.title}, {"command", v.command}};
  if (!v.arguments.empty()) j["arguments"] = v.arguments;
}

void to_json(json& j, const CodeLens& v) { j = {{"range", v.range}, {"command", v.command}}; }

void to_json(json& j, const Diagnostic& v) {
  j = {{"range", v.range}, {"severity", v.severity}, {"source", v.source}, {"message", v.message}};
  if (!v.code.empty()) j["code"] = v.code;
}
void from_json(const json& j, Diagnostic& v) {
  v.range = j.at("range").get<Range>();
  v.severity = integerOr(j, "severity", 1);
  v.code = j.contains("code") && j["code"].is_string() ? j["code"].get<std::string>() : "";
  v.source = j.value("source", "");
  v.message = j.at("message").get<std::string>();
}

void to_json(json& j, const PublishDiagnosticsParams& v) {
  j = {{"uri", v.uri}, {"diagnostics", v.diagnostics}};
  if (v.version) j["version"] = *v.version;
}

void to_json(json& j, const TextEdit& v) { j = {{"range", v.range}, {"newText", v.new_text}}; }

void to_json(json& j, const CodeAction& v) {
  j = {{"title", v.title}};
  if (!v.kind.empty()) j["kind"] = v.kind;
  if (!v.edits.empty()) j["edit"] = {{"changes", {{v.uri, v.edits}}}};
  if (v.command) j["command"] = *v.command;
}

void to_json(json& j, const ShowMessageParams& v) {
  j = {{"type", static_cast<int>(v.type)}, {"message", v.message}};
}

void to_json(json& j, const WorkDoneProgress& v) {
  switch (v.kind) {
    case WorkDoneProgress::Kind::Begin:
      j = {{"kind", "begin"}, {"title", v.title}, {"cancellable", false}};
      break;
    case WorkDoneProgress::Kind::Report:
      j = {{"kind", "report"}};
      break;
    case WorkDoneProgress::Kind::End:
      j = {{"kind", "end"}};
      break;
  }
  if (!v.message.empty()) j["message"] = v.message;
  if (v.percentage && v.kind != WorkDoneProgress::Kind::End) j["percentage"] = *v.percentage;
}

namespace {
int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::string> uriToPath(std::string_view uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  uri.remove_prefix(kScheme.size());
  // Authority (host) must be empty or localhost.
  size_t slash = uri.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view host = uri.substr(0, slash);
  if (!host.empty() && host != "localhost") return std::nullopt;
  uri.remove_prefix(slash);
  std::string out;
  for (size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] == '%' && i + 2 < uri.size()) {
      int hi = hexValue(uri[i + 1]), lo = hexValue(uri[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (uri[i] == '%') {
      return std::nullopt;
    } else {
      out.push_back(uri[i]);
    }
  }
  return out;
}

std::string pathToUri(std::string_view path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "file://";
  for (unsigned char c : path) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
    if (safe) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace perfhat::lsp
