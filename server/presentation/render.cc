#include "server/presentation/render.h"

namespace perfhat::presentation {
namespace {

json stringArgs(const std::vector<std::string>& args) {
  json a = json::array();
  for (const auto& s : args) a.push_back(s);
  return a;
}

// Strips markdown emphasis for clients that only render plain text.
std::string plain(const std::string& md) {
  std::string out;
  out.reserve(md.size());
  for (char c : md) {
    if (c != '*' && c != '`' && c != '_') out.push_back(c);
  }
  return out;
}

}  // namespace

Range render(const analysis::Range& r, const ToLsp& conv) { return {conv(r.start), conv(r.end)}; }

InlayHint render(const features::InlayHint& h, const ToLsp& conv) {
  InlayHint out;
  out.position = conv(h.position);
  out.label = h.label;
  out.tooltip = h.tooltip;
  out.padding_left = h.padding_left;
  return out;
}

Hover render(const features::HoverResult& h, const ToLsp& conv, bool markdown) {
  Hover out;
  out.markdown = markdown ? h.markdown : plain(h.markdown);
  out.markdown_kind = markdown;
  out.range = render(h.range, conv);
  return out;
}

CodeLens render(const features::CodeLens& l, const ToLsp& conv) {
  CodeLens out;
  out.range = render(l.range, conv);
  out.command.title = l.title;
  out.command.command = l.command;
  out.command.arguments = stringArgs(l.arguments);
  return out;
}

Diagnostic render(const features::Diagnostic& d, const ToLsp& conv) {
  Diagnostic out;
  out.range = render(d.range, conv);
  out.severity = static_cast<int>(d.severity);
  out.code = d.code;
  out.message = d.message;
  return out;
}

CodeAction render(const features::CodeAction& a, const std::string& uri, const ToLsp& conv) {
  CodeAction out;
  out.title = a.title;
  out.kind = a.kind;
  out.uri = uri;
  for (const auto& e : a.edits) out.edits.push_back({render(e.range, conv), e.new_text});
  if (!a.command.empty()) out.command = Command{a.title, a.command, stringArgs(a.arguments)};
  return out;
}

}  // namespace perfhat::presentation
