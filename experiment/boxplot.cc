#include "experiment/boxplot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace perfhat::experiment {
namespace {

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tickLabel(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A "nice" tick step (1, 2 or 5 × 10^k) giving about five ticks up to `max`.
double tickStep(double max) {
  if (max <= 0) return 1;
  const double raw = max / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * mag) return m * mag;
  }
  return 10 * mag;
}

}  // namespace

std::string escapeXml(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

BoxStats boxStats(std::vector<double> xs) {
  BoxStats b;
  if (xs.empty()) return b;
  std::sort(xs.begin(), xs.end());
  b.q1 = quantile(xs, 0.25);
  b.median = quantile(xs, 0.5);
  b.q3 = quantile(xs, 0.75);
  const double iqr = b.q3 - b.q1;
  const double lo = b.q1 - 1.5 * iqr, hi = b.q3 + 1.5 * iqr;
  b.whisker_low = b.q1;
  b.whisker_high = b.q3;
  for (double x : xs) {
    if (x < lo || x > hi) {
      b.outliers.push_back(x);
    } else {
      b.whisker_low = std::min(b.whisker_low, x);
      b.whisker_high = std::max(b.whisker_high, x);
    }
  }
  return b;
}

std::string boxPlotSvg(const std::string& title, const std::vector<BoxSeries>& series,
                       const std::vector<BoxCategory>& categories) {
  const double box_w = 28, gap = 8, cat_pad = 30, left = 64, top = 48, plot_h = 260;
  // Wide enough for the title and the legend (approximate glyph widths), the categories spread
  // over it: with few categories the title would be clipped otherwise.
  double legend_w = 0;
  for (const auto& se : series) legend_w += 24 + 7.0 * static_cast<double>(se.name.size());
  const double min_plot_w = std::max(8.5 * static_cast<double>(title.size()), legend_w);
  const double n_cat = static_cast<double>(std::max<size_t>(categories.size(), 1));
  size_t longest_label = 0;
  for (const auto& c : categories) longest_label = std::max(longest_label, c.label.size());
  const double boxes_w = static_cast<double>(series.size()) * (box_w + gap) - gap;
  const double cat_w = std::max(
      {boxes_w + cat_pad, min_plot_w / n_cat, 7.0 * static_cast<double>(longest_label) + 12});
  const double width = left + n_cat * cat_w + 20;
  const double height = top + plot_h + 50;
  double max = 0;
  for (const auto& c : categories) {
    for (const auto& g : c.groups) {
      for (double v : g) max = std::max(max, v);
    }
  }
  const double step = tickStep(max);
  const double axis_max = std::max(step, std::ceil(max / step) * step);
  auto y = [&](double v) { return top + plot_h - v / axis_max * plot_h; };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"boxplot\" width=\"" +
                  num(width) + "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) +
                  " " + num(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<title>" + escapeXml(title) + "</title>\n";
  s += "<text x=\"" + num(left) + "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">" +
       escapeXml(title) + "</text>\n";
  double lx = left;  // legend
  for (const auto& se : series) {
    s += "<rect x=\"" + num(lx) + "\" y=\"26\" width=\"12\" height=\"12\" fill=\"" + se.color +
         "\" fill-opacity=\"0.5\" stroke=\"" + se.color + "\"/><text x=\"" + num(lx + 16) +
         "\" y=\"36\">" + escapeXml(se.name) + "</text>\n";
    lx += 24 + 7.0 * static_cast<double>(se.name.size());
  }
  const int ticks = static_cast<int>(std::lround(axis_max / step));
  for (int k = 0; k <= ticks; ++k) {  // axis and grid
    const double t = step * k;
    s += "<line x1=\"" + num(left) + "\" x2=\"" + num(width - 20) + "\" y1=\"" + num(y(t)) +
         "\" y2=\"" + num(y(t)) + "\" stroke=\"#ddd\"/><text x=\"" + num(left - 6) + "\" y=\"" +
         num(y(t) + 4) + "\" text-anchor=\"end\">" + tickLabel(t) + "</text>\n";
  }
  s += "<text transform=\"translate(14," + num(top + plot_h / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">seconds</text>\n";
  for (size_t c = 0; c < categories.size(); ++c) {
    const double x0 = left + static_cast<double>(c) * cat_w + (cat_w - boxes_w) / 2;
    for (size_t g = 0; g < categories[c].groups.size() && g < series.size(); ++g) {
      if (categories[c].groups[g].empty()) continue;
      const BoxStats b = boxStats(categories[c].groups[g]);
      const std::string& col = series[g].color;
      const double x = x0 + static_cast<double>(g) * (box_w + gap), mid = x + box_w / 2;
      s += "<g class=\"box\" data-category=\"" + escapeXml(categories[c].label) +
           "\" data-series=\"" + escapeXml(series[g].name) + "\">";
      s += "<line x1=\"" + num(mid) + "\" x2=\"" + num(mid) + "\" y1=\"" + num(y(b.whisker_low)) +
           "\" y2=\"" + num(y(b.whisker_high)) + "\" stroke=\"" + col + "\"/>";
      for (double w : {b.whisker_low, b.whisker_high}) {
        s += "<line x1=\"" + num(x + 6) + "\" x2=\"" + num(x + box_w - 6) + "\" y1=\"" + num(y(w)) +
             "\" y2=\"" + num(y(w)) + "\" stroke=\"" + col + "\"/>";
      }
      s += "<rect x=\"" + num(x) + "\" y=\"" + num(y(b.q3)) + "\" width=\"" + num(box_w) +
           "\" height=\"" + num(std::max(1.0, y(b.q1) - y(b.q3))) + "\" fill=\"";
      s += col;
      s += "\" fill-opacity=\"0.5\" stroke=\"";
      s += col;
      s += "\"/>";
      s += "<line x1=\"" + num(x) + "\" x2=\"" + num(x + box_w) + "\" y1=\"" + num(y(b.median)) +
           "\" y2=\"" + num(y(b.median)) + "\" stroke=\"#222\" stroke-width=\"2\"/>";
      for (double o : b.outliers) {
        s += "<circle cx=\"" + num(mid) + "\" cy=\"" + num(y(o)) + "\" r=\"3\" fill=\"none\" " +
             "stroke=\"" + col + "\"/>";
      }
      s += "</g>\n";
    }
    s += "<text x=\"" + num(x0 + boxes_w / 2) + "\" y=\"" + num(top + plot_h + 20) +
         "\" text-anchor=\"middle\">" + escapeXml(categories[c].label) + "</text>\n";
  }
  s += "<line x1=\"" + num(left) + "\" x2=\"" + num(left) + "\" y1=\"" + num(top) + "\" y2=\"" +
       num(top + plot_h) + "\" stroke=\"#444\"/>\n</svg>\n";
  return s;
}

}  // namespace perfhat::experiment
