// Svg: builds one standalone inline <svg> element as text, for the charts of report.html.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vdnn::tools {

/// `text` with &, <, >, " and ' replaced by entities: safe in XML/HTML text and attribute values.
std::string escape_xml(std::string_view text);

/// `value` with at most `decimals` decimals, trailing zeros dropped ("12.5", "3", "-0.25").
std::string format_number(double value, int decimals = 1);

struct Point {
  double x = 0.0;
  double y = 0.0;
};

/// An axis-aligned rectangle in pixels, origin top left.
struct Box {
  double x = 0.0;
  double y = 0.0;
  double width = 0.0;
  double height = 0.0;
  double right() const { return x + width; }
  double bottom() const { return y + height; }
};

struct Stroke {
  std::string colour = "#444444";
  double width = 1.0;
  bool dashed = false;
};

struct TextStyle {
  double size = 12.0;
  std::string anchor = "start";  // SVG text-anchor: start, middle, end
  std::string colour = "#222222";
  double rotate = 0.0;  // degrees, about the text's anchor point
  bool bold = false;
  bool halo = false;  // a white outline, to stay readable over bars and lines
};

/// The elements of one <svg>, appended in drawing order (later ones paint over earlier ones).
/// Every string that ends up as text or as an attribute value is escaped here; colours are
/// taken as given ("#rrggbb"). Not thread-safe.
class Svg {
 public:
  Svg(double width, double height);

  double width() const { return width_; }
  double height() const { return height_; }

  /// Sets an attribute of the <svg> element itself, e.g. data-expect-colors.
  void set_attribute(std::string name, std::string value);

  void rect(const Box& box, const std::string& fill);
  void line(Point from, Point to, const Stroke& stroke);
  void text(Point at, std::string_view content, const TextStyle& style = {});
  /// A closed filled polygon without outline.
  void polygon(const std::vector<Point>& points, const std::string& fill);

  /// Opens a <g class="css_class"> that the following elements belong to, until end_group().
  void begin_group(std::string_view css_class);
  void end_group();

  /// The whole <svg> element.
  std::string str() const;

 private:
  double width_;
  double height_;
  std::vector<std::pair<std::string, std::string>> attributes_;
  std::string body_;
};

}  // namespace vdnn::tools
