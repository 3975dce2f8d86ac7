"""A dependency-free PNG bar chart: each row a label, a bar of a ratio and its value, with a
line at 1.0 (the baseline). Pixels are drawn with a built-in 5x7 font and written with zlib."""

import struct
import zlib

# 5x7 glyphs, one string of 7 rows of 5 bits each ('#' on).
_FONT_ROWS = {
    "0": " ### #   ##  ###   ###  ##   # ### ", "1": "  #   ##    #    #    #    #   ### ",
    "2": " ### #   #    #   #   #   #   #####", "3": "#####   #   #     #    ##   # ### ",
    "4": "   #   ##  # # #  # #####   #    # ", "5": "######    ####     #    ##   # ### ",
    "6": "  ##  #   #    #### #   ##   # ### ", "7": "#####    #   #   #   #    #    #   ",
    "8": " ### #   ##   # ### #   ##   # ### ", "9": " ### #   ##   # ####    #   #  ##  ",
    "A": " ### #   ##   #######   ##   ##   #", "B": "#### #   ##   ##### #   ##   ##### ",
    "C": " ### #   ##    #    #    #   # ### ", "D": "###  #  # #   ##   ##   ##  # ###  ",
    "E": "######    #    #### #    #    #####", "F": "######    #    #### #    #    #    ",
    "G": " ### #   ##    # ####   ##   # ####", "H": "#   ##   ##   #######   ##   ##   #",
    "I": " ###   #    #    #    #    #   ### ", "J": "  ###   #    #    #    ##  # ##   ",
    "K": "#   ##  # # #  ##   # #  #  # #   #", "L": "#    #    #    #    #    #    #####",
    "M": "#   ### ### # ##   ##   ##   ##   #", "N": "#   ##   ###  ## # ##  ###   ##   #",
    "O": " ### #   ##   ##   ##   ##   # ### ", "P": "#### #   ##   ##### #    #    #    ",
    "Q": " ### #   ##   ##   ## # ##  #  ## #", "R": "#### #   ##   ##### # #  #  # #   #",
    "S": " ####    #     ###     #    #####  ", "T": "#####  #    #    #    #    #    #  ",
    "U": "#   ##   ##   ##   ##   ##   # ### ", "V": "#   ##   ##   ##   ##   # # #   #  ",
    "W": "#   ##   ##   ## # ## # ## # # # # ", "X": "#   ##   # # #   #   # # #   ##   #",
    "Y": "#   ##   # # #   #    #    #    #  ", "Z": "#####    #   #   #   #   #    #####",
    ".": "                         ##   ##  ", "-": "               ###               ",
    ":": "      ##   ##         ##   ##      ", "/": "    #    #   #   #   #   #    #    ",
    "(": "   #   #   #    #    #     #     # ", ")": " #     #     #    #    #   #   #   ",
    "=": "          #####     #####          ", "+": "       #    #  #####  #    #       ",
    "_": "                              #####", ",": "                    ##    #   #   ",
    " ": " " * 35,
}
_GLYPH_W, _GLYPH_H, _SCALE = 5, 7, 2


def _glyph(ch):
    rows = _FONT_ROWS.get(ch.upper(), _FONT_ROWS["-"]).ljust(35)[:35]
    return [[rows[r * 5 + c] == "#" for c in range(5)] for r in range(7)]


class _Canvas:
    def __init__(self, width, height, background=(255, 255, 255)):
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def rect(self, x0, y0, x1, y1, color):
        x0, x1 = max(0, int(x0)), min(self.width, int(x1))
        y0, y1 = max(0, int(y0)), min(self.height, int(y1))
        row = bytes(color) * max(0, x1 - x0)
        for y in range(y0, y1):
            start = (y * self.width + x0) * 3
            self.pixels[start:start + len(row)] = row

    def text(self, x, y, text, color=(0, 0, 0), scale=_SCALE):
        for ch in text:
            for r, bits in enumerate(_glyph(ch)):
                for c, on in enumerate(bits):
                    if on:
                        self.rect(x + c * scale, y + r * scale, x + (c + 1) * scale,
                                  y + (r + 1) * scale, color)
            x += (_GLYPH_W + 1) * scale

    def png(self):
        raw = b"".join(b"\x00" + bytes(self.pixels[y * self.width * 3:(y + 1) * self.width * 3])
                       for y in range(self.height))

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

        header = struct.pack(">IIBBBBB", self.width, self.height, 8, 2, 0, 0, 0)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                + chunk(b"IEND", b""))


def text_width(text, scale=_SCALE):
    return len(text) * (_GLYPH_W + 1) * scale


def bar_chart(rows, title, baseline_label="1.0 = baseline", path=None):
    """rows: (label, ratio) pairs. Bars are green at or above 1.0, orange from 0.9, red below.
    Returns the PNG bytes (and writes them to ``path`` when given)."""
    if not rows:
        raise ValueError("rows: expected at least one (label, ratio) pair, got none")
    label_w = max(text_width(label) for label, _ in rows) + 20
    bar_w, row_h, top = 520, 26, 60
    width = label_w + bar_w + 90
    height = top + row_h * len(rows) + 40
    top_ratio = max(1.25, max(r for _, r in rows if r == r) * 1.05)
    canvas = _Canvas(width, height)
    canvas.text(10, 12, title)
    canvas.text(10, 34, baseline_label, color=(90, 90, 90))
    for i, (label, ratio) in enumerate(rows):
        y = top + i * row_h
        canvas.text(10, y + 6, label)
        value = 0.0 if ratio != ratio else max(0.0, ratio)
        color = (46, 160, 67) if value >= 1.0 else (230, 140, 30) if value >= 0.9 else (210, 50, 50)
        canvas.rect(label_w, y + 4, label_w + bar_w * min(value, top_ratio) / top_ratio, y + row_h - 4,
                    color)
        canvas.text(label_w + bar_w + 8, y + 6, "n/a" if ratio != ratio else f"{ratio:.2f}x")
    one = label_w + bar_w / top_ratio
    canvas.rect(one, top - 6, one + 2, top + row_h * len(rows) + 4, (0, 0, 0))
    data = canvas.png()
    if path is not None:
        with open(path, "wb") as f:
            f.write(data)
    return data
