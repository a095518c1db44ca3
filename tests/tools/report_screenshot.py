#!/usr/bin/env python3
"""report_screenshot.py REPORT.html OUT.png: renders vdnn compare's report.html in headless
Chromium and checks the pixels, not the tags: each chart's plot area is on screen (found by the
background colour its <svg> names in data-frame-color) and shows every series colour the <svg>
names in data-expect-colors on at least MIN_PIXELS pixels; the page is not blank.
Standard library only (the PNG is decoded here). VDNN_CHROMIUM names the browser to use;
otherwise the first of BROWSERS on PATH. Exit status 0: passed; 1: a check failed or
Chromium is missing or failed; 2: usage."""
import html.parser
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

MIN_PIXELS = 200          # per expected colour, inside its chart's plot area
MIN_FRAME_SIDE = 100      # a plot area smaller than this (pixels) did not render
MIN_INK_FRACTION = 0.04   # non-white share of the page down to its last non-white row
COLOUR_TOLERANCE = 2      # per channel, for colour-management rounding
TIMEOUT_S = 60
BROWSERS = ("chromium-headless-shell", "chromium", "chromium-browser")
WIDTH = 1280


class Failure(Exception):
    pass


class ReportParser(html.parser.HTMLParser):
    """Collects each chart's <svg> attributes and the number of table rows."""

    def __init__(self):
        super().__init__()
        self.charts = []
        self.rows = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr":
            self.rows += 1
        if tag == "svg" and "data-frame-color" in attrs:
            self.charts.append({
                "name": attrs.get("data-chart", "chart %d" % (len(self.charts) + 1)),
                "frame": parse_colour(attrs["data-frame-color"]),
                "expect": [parse_colour(c) for c in attrs.get("data-expect-colors", "").split()],
                "height": float(attrs.get("height", "600")),
            })


def parse_colour(text):
    text = text.strip().lstrip("#")
    if len(text) != 6:
        raise Failure("colour %r is not #rrggbb" % text)
    return tuple(int(text[i:i + 2], 16) for i in (0, 2, 4))


def hex_colour(rgb):
    return "#%02X%02X%02X" % rgb


def find_browser():
    override = os.environ.get("VDNN_CHROMIUM")
    if override:
        if not shutil.which(override):
            raise Failure("VDNN_CHROMIUM=%s is not an executable" % override)
        return shutil.which(override)
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    raise Failure("no headless Chromium found (tried %s); install the Debian package "
                  "chromium-headless-shell (tools/install-deps.sh)" % ", ".join(BROWSERS))


def screenshot(report, out, height):
    browser = find_browser()
    with tempfile.TemporaryDirectory(prefix="vdnn-chromium-") as profile:
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   "--disable-dev-shm-usage", "--no-first-run", "--force-color-profile=srgb",
                   "--force-device-scale-factor=1", "--user-data-dir=" + profile,
                   "--screenshot=" + os.path.abspath(out),
                   "--window-size=%d,%d" % (WIDTH, height),
                   "file://" + os.path.abspath(report)]
        try:
            run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Failure("%s did not finish within %d s" % (browser, TIMEOUT_S))
    if run.returncode != 0 or not os.path.exists(out):
        tail = run.stdout.decode(errors="replace")[-2000:]
        raise Failure("%s exited with %d and wrote no %s:\n%s" % (browser, run.returncode, out, tail))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter_row(kind, row, prev, bpp):
    """Reverses one scanline's PNG filter in place (row and prev are bytearrays)."""
    n = len(row)
    if kind == 0:
        return
    if kind == 1:
        for i in range(bpp, n):
            row[i] = (row[i] + row[i - bpp]) & 0xFF
    elif kind == 2:
        # Bytewise addition without carries between bytes, on whole rows at once.
        a, b = int.from_bytes(row, "big"), int.from_bytes(prev, "big")
        low, high = int.from_bytes(b"\x7f" * n, "big"), int.from_bytes(b"\x80" * n, "big")
        row[:] = (((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(n, "big")
    elif kind == 3:
        for i in range(n):
            left = row[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + ((left + prev[i]) >> 1)) & 0xFF
    elif kind == 4:
        for i in range(n):
            left = row[i - bpp] if i >= bpp else 0
            up_left = prev[i - bpp] if i >= bpp else 0
            row[i] = (row[i] + paeth(left, prev[i], up_left)) & 0xFF
    else:
        raise Failure("PNG filter type %d is not one of 0-4" % kind)


def read_png(path):
    """Returns (width, height, bytes per pixel, rows) of an 8-bit RGB or RGBA PNG."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure("%s is not a PNG" % path)
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise Failure("PNG depth %d, colour type %d, interlace %d: only 8-bit RGB/RGBA, not "
                      "interlaced, is supported" % (depth, colour_type, interlace))
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        row = bytearray(raw[start + 1:start + 1 + stride])
        unfilter_row(raw[start], row, prev, bpp)
        rows.append(bytes(row))
        prev = row
    return width, height, bpp, rows


def pixel_columns(row, rgb, bpp):
    """The x of every pixel of `row` that is exactly `rgb`."""
    pattern, found, at = bytes(rgb), [], row.find(bytes(rgb))
    while at >= 0:
        if at % bpp == 0:
            found.append(at // bpp)
        at = row.find(pattern, at + 1)
    return found


def find_frame(image, rgb):
    """The bounding box (x0, y0, x1, y1), exclusive ends, of the pixels of colour `rgb`."""
    _, _, bpp, rows = image
    box = None
    for y, row in enumerate(rows):
        xs = pixel_columns(row, rgb, bpp)
        if not xs:
            continue
        if box is None:
            box = [xs[0], y, xs[-1] + 1, y + 1]
        box = [min(box[0], xs[0]), box[1], max(box[2], xs[-1] + 1), y + 1]
    return box


def colour_counts(image, box):
    """A histogram {(r, g, b): pixels} of the pixels inside `box`."""
    _, _, bpp, rows = image
    x0, y0, x1, y1 = box
    counts = {}
    for row in rows[y0:y1]:
        part = row[x0 * bpp:x1 * bpp]
        for rgb in zip(part[0::bpp], part[1::bpp], part[2::bpp]):
            counts[rgb] = counts.get(rgb, 0) + 1
    return counts


def pixels_near(counts, rgb):
    return sum(n for c, n in counts.items()
               if all(abs(c[i] - rgb[i]) <= COLOUR_TOLERANCE for i in range(3)))


def check_chart(image, chart):
    """Returns 'name: #colour N px, ...' or raises Failure."""
    width, height = image[0], image[1]
    box = find_frame(image, chart["frame"])
    name = chart["name"]
    if box is None:
        raise Failure("chart %s: its plot background %s is nowhere on the screenshot"
                      % (name, hex_colour(chart["frame"])))
    if box[2] - box[0] < MIN_FRAME_SIDE or box[3] - box[1] < MIN_FRAME_SIDE:
        raise Failure("chart %s: plot area %s is too small to be a rendered chart" % (name, box))
    if box[3] >= height:
        raise Failure("chart %s is cut off at the bottom of the %dx%d screenshot"
                      % (name, width, height))
    if not chart["expect"]:
        raise Failure("chart %s names no series colour in data-expect-colors: it drew no data"
                      % name)
    counts = colour_counts(image, box)
    found = []
    for rgb in chart["expect"]:
        pixels = pixels_near(counts, rgb)
        if pixels < MIN_PIXELS:
            raise Failure("chart %s: series colour %s covers %d pixels of its plot area, "
                          "fewer than %d" % (name, hex_colour(rgb), pixels, MIN_PIXELS))
        found.append("%s %d px" % (hex_colour(rgb), pixels))
    return "%s: %s" % (name, ", ".join(found))


def ink_fraction(image):
    """The non-white share of the pixels down to the last row that has any."""
    width, _, bpp, rows = image
    ink, last = 0, 0
    for y, row in enumerate(rows):
        white = list(zip(row[0::bpp], row[1::bpp], row[2::bpp])).count((255, 255, 255))
        if white < width:
            ink += width - white
            last = y + 1
    return ink / float(max(last, 1) * width)


def main(argv):
    if len(argv) != 3:
        print("usage: report_screenshot.py REPORT.html OUT.png", file=sys.stderr)
        return 2
    report, out = argv[1], argv[2]
    parser = ReportParser()
    with open(report, encoding="utf-8") as f:
        parser.feed(f.read())
    if not parser.charts:
        raise Failure("%s has no chart (<svg data-frame-color=...>)" % report)
    height = int(300 + 40 * parser.rows + sum(c["height"] + 60 for c in parser.charts))
    if os.path.exists(out):
        os.remove(out)
    screenshot(report, out, height)
    image = read_png(out)
    lines = [check_chart(image, chart) for chart in parser.charts]
    ink = ink_fraction(image)
    if ink < MIN_INK_FRACTION:
        raise Failure("the page is nearly blank: %.1f%% non-white pixels, expected at least %.0f%%"
                      % (100 * ink, 100 * MIN_INK_FRACTION))
    print("report_screenshot: %s, %dx%d, %d charts, %.0f%% non-white" %
          (out, image[0], image[1], len(parser.charts), 100 * ink))
    for line in lines:
        print("  " + line)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Failure as failure:
        print("report_screenshot: FAILED: %s" % failure, file=sys.stderr)
        sys.exit(1)
