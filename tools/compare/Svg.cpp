// The SVG element writer of report.html: escaping, number formatting, and the few shapes the
// charts draw.
#include "tools/compare/Svg.hpp"

#include <cmath>
#include <cstdio>

namespace vdnn::tools {

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
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

std::string format_number(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, value);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

Svg::Svg(double width, double height) : width_(width), height_(height) {}

void Svg::set_attribute(std::string name, std::string value) {
  attributes_.emplace_back(std::move(name), std::move(value));
}

void Svg::rect(const Box& box, const std::string& fill) {
  body_ += "<rect x=\"" + format_number(box.x) + "\" y=\"" + format_number(box.y) + "\" width=\"" +
           format_number(box.width) + "\" height=\"" + format_number(box.height) + "\" fill=\"" +
           escape_xml(fill) + "\"/>\n";
}

void Svg::line(Point from, Point to, const Stroke& stroke) {
  body_ += "<line x1=\"" + format_number(from.x) + "\" y1=\"" + format_number(from.y) + "\" x2=\"" +
           format_number(to.x) + "\" y2=\"" + format_number(to.y) + "\" stroke=\"" +
           escape_xml(stroke.colour) + "\" stroke-width=\"" + format_number(stroke.width) + "\"";
  if (stroke.dashed) body_ += " stroke-dasharray=\"6 4\"";
  body_ += "/>\n";
}

void Svg::text(Point at, std::string_view content, const TextStyle& style) {
  body_ += "<text x=\"" + format_number(at.x) + "\" y=\"" + format_number(at.y) +
           "\" font-size=\"" + format_number(style.size) + "\" fill=\"" + escape_xml(style.colour) +
           "\" text-anchor=\"" + escape_xml(style.anchor) + "\"";
  if (style.bold) body_ += " font-weight=\"bold\"";
  if (style.halo) body_ += " stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\"";
  if (style.rotate != 0.0) {
    body_ += " transform=\"rotate(" + format_number(style.rotate) + " " + format_number(at.x) +
             " " + format_number(at.y) + ")\"";
  }
  body_ += ">" + escape_xml(content) + "</text>\n";
}

void Svg::polygon(const std::vector<Point>& points, const std::string& fill) {
  if (points.empty()) return;
  body_ += "<polygon fill=\"" + escape_xml(fill) + "\" points=\"";
  for (const Point& p : points) body_ += format_number(p.x) + "," + format_number(p.y) + " ";
  body_.back() = '"';
  body_ += "/>\n";
}

void Svg::begin_group(std::string_view css_class) {
  body_ += "<g class=\"" + escape_xml(css_class) + "\">\n";
}

void Svg::end_group() { body_ += "</g>\n"; }

std::string Svg::str() const {
  // No xmlns: inline SVG in HTML needs none, and the report names no URL at all.
  std::string out = "<svg width=\"" + format_number(width_) + "\" height=\"" +
                    format_number(height_) + "\" viewBox=\"0 0 " + format_number(width_) + " " +
                    format_number(height_) + "\" font-family=\"sans-serif\"";
  for (const auto& [name, value] : attributes_) {
    out += " " + escape_xml(name) + "=\"" + escape_xml(value) + "\"";
  }
  return out + ">\n" + body_ + "</svg>\n";
}

}  // namespace vdnn::tools
