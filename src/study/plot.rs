//! A small raster for the training runs' plots: lines, bars and text in a built-in 5×7 font,
//! written as a PNG (zlib from miniz_oxide, the CRC here), so a plot needs no fonts or
//! libraries the machine may lack.

pub type Rgb = [u8; 3];

pub const WHITE: Rgb = [255, 255, 255];
pub const BLACK: Rgb = [20, 20, 20];
pub const GREY: Rgb = [160, 160, 160];
pub const LIGHT: Rgb = [225, 225, 225];
/// Colour-blind-safe series colours (Okabe & Ito).
pub const PALETTE: [Rgb; 8] =
    [[0, 114, 178], [230, 159, 0], [0, 158, 115], [204, 121, 167], [86, 180, 233], [213, 94, 0], [240, 228, 66], [20, 20, 20]];

pub struct Canvas {
    pub w: usize,
    pub h: usize,
    px: Vec<Rgb>,
}

/// 5×7 glyphs, a row per byte, bit 4 leftmost.
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E],
        '1' => [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E],
        '2' => [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F],
        '3' => [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E],
        '4' => [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02],
        '5' => [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E],
        '6' => [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E],
        '7' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E],
        '9' => [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C],
        'A' => [0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11],
        'B' => [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E],
        'C' => [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E],
        'D' => [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C],
        'E' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F],
        'F' => [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10],
        'G' => [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F],
        'H' => [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11],
        'I' => [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'J' => [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C],
        'K' => [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11],
        'L' => [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F],
        'M' => [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11],
        'N' => [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11],
        'O' => [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'P' => [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10],
        'Q' => [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D],
        'R' => [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11],
        'S' => [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E],
        'T' => [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        'U' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E],
        'V' => [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'W' => [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A],
        'X' => [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11],
        'Y' => [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04],
        'Z' => [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F],
        'a' => [0x00, 0x00, 0x0E, 0x01, 0x0F, 0x11, 0x0F],
        'b' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1E],
        'c' => [0x00, 0x00, 0x0E, 0x10, 0x10, 0x11, 0x0E],
        'd' => [0x01, 0x01, 0x0D, 0x13, 0x11, 0x11, 0x0F],
        'e' => [0x00, 0x00, 0x0E, 0x11, 0x1F, 0x10, 0x0E],
        'f' => [0x06, 0x09, 0x08, 0x1C, 0x08, 0x08, 0x08],
        'g' => [0x00, 0x0F, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'h' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11],
        'i' => [0x04, 0x00, 0x0C, 0x04, 0x04, 0x04, 0x0E],
        'j' => [0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0C],
        'k' => [0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12],
        'l' => [0x0C, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E],
        'm' => [0x00, 0x00, 0x1A, 0x15, 0x15, 0x11, 0x11],
        'n' => [0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11],
        'o' => [0x00, 0x00, 0x0E, 0x11, 0x11, 0x11, 0x0E],
        'p' => [0x00, 0x00, 0x1E, 0x11, 0x1E, 0x10, 0x10],
        'q' => [0x00, 0x00, 0x0D, 0x13, 0x0F, 0x01, 0x01],
        'r' => [0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10],
        's' => [0x00, 0x00, 0x0E, 0x10, 0x0E, 0x01, 0x1E],
        't' => [0x08, 0x08, 0x1C, 0x08, 0x08, 0x09, 0x06],
        'u' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0D],
        'v' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x0A, 0x04],
        'w' => [0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0A],
        'x' => [0x00, 0x00, 0x11, 0x0A, 0x04, 0x0A, 0x11],
        'y' => [0x00, 0x00, 0x11, 0x11, 0x0F, 0x01, 0x0E],
        'z' => [0x00, 0x00, 0x1F, 0x02, 0x04, 0x08, 0x1F],
        '.' => [0, 0, 0, 0, 0, 0x0C, 0x0C],
        ',' => [0, 0, 0, 0, 0x0C, 0x04, 0x08],
        ':' => [0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0],
        '%' => [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03],
        '-' => [0, 0, 0, 0x1F, 0, 0, 0],
        '+' => [0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0],
        '/' => [0, 0x01, 0x02, 0x04, 0x08, 0x10, 0],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '[' => [0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E],
        ']' => [0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E],
        '=' => [0, 0, 0x1F, 0, 0x1F, 0, 0],
        '_' => [0, 0, 0, 0, 0, 0, 0x1F],
        '#' => [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A],
        '\'' => [0x0C, 0x04, 0x08, 0, 0, 0, 0],
        '>' => [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08],
        '<' => [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02],
        '*' => [0, 0x04, 0x15, 0x0E, 0x15, 0x04, 0],
        '|' => [0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04],
        _ => [0; 7],
    }
}

impl Canvas {
    pub fn new(w: usize, h: usize) -> Self {
        Canvas { w, h, px: vec![WHITE; w * h] }
    }

    pub fn set(&mut self, x: i64, y: i64, c: Rgb) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            self.px[y as usize * self.w + x as usize] = c;
        }
    }

    pub fn rect(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: Rgb) {
        for y in y0.min(y1)..=y0.max(y1) {
            for x in x0.min(x1)..=x0.max(x1) {
                self.set(x, y, c);
            }
        }
    }

    /// A line two pixels thick (Bresenham).
    pub fn line(&mut self, (x0, y0): (i64, i64), (x1, y1): (i64, i64), c: Rgb) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.rect(x, y, x + 1, y + 1, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Text at `scale` × the 5×7 font, its top left at (x, y); returns its width.
    pub fn text(&mut self, x: i64, y: i64, s: &str, c: Rgb, scale: i64) -> i64 {
        for (i, ch) in s.chars().enumerate() {
            let g = glyph(ch);
            let gx = x + i as i64 * 6 * scale;
            for (row, bits) in g.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        self.rect(gx + col * scale, y + row as i64 * scale, gx + (col + 1) * scale - 1, y + (row as i64 + 1) * scale - 1, c);
                    }
                }
            }
        }
        text_width(s, scale)
    }

    /// The image as a PNG (8-bit RGB, no filtering).
    pub fn png(&self) -> Vec<u8> {
        let mut raw = Vec::with_capacity(self.h * (1 + 3 * self.w));
        for y in 0..self.h {
            raw.push(0);
            for p in &self.px[y * self.w..(y + 1) * self.w] {
                raw.extend_from_slice(p);
            }
        }
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(self.w as u32).to_be_bytes());
        ihdr.extend_from_slice(&(self.h as u32).to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        chunk(&mut out, b"IHDR", &ihdr);
        chunk(&mut out, b"IDAT", &miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6));
        chunk(&mut out, b"IEND", &[]);
        out
    }
}

pub fn text_width(s: &str, scale: i64) -> i64 {
    s.chars().count() as i64 * 6 * scale
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// CRC-32 (IEEE), as PNG's chunks need.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

/// A chart's box on the canvas.
#[derive(Clone, Copy)]
pub struct Area {
    pub x: i64,
    pub y: i64,
    pub w: i64,
    pub h: i64,
}

pub struct Series {
    pub name: String,
    pub color: Rgb,
    pub points: Vec<(f64, f64)>,
}

fn nice(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Lines over a shared x axis, with a title, a legend in rows above the plot, and y ticks;
/// `y_range` fixes the y axis (otherwise the data's range).
pub fn line_chart(c: &mut Canvas, a: Area, title: &str, x_label: &str, series: &[Series], y_range: Option<(f64, f64)>) {
    c.text(a.x, a.y, title, BLACK, 2);
    // Legend rows.
    let (mut lx, mut ly) = (a.x, a.y + 20);
    for s in series {
        let w = 24 + text_width(&s.name, 1) + 14;
        if lx + w > a.x + a.w {
            lx = a.x;
            ly += 12;
        }
        c.rect(lx, ly + 3, lx + 18, ly + 4, s.color);
        c.text(lx + 22, ly, &s.name, BLACK, 1);
        lx += w;
    }
    let top = ly + 16;
    let (px0, py0, px1, py1) = (a.x + 50, top, a.x + a.w - 8, a.y + a.h - 24);
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x_min, x_max) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (mut y_min, mut y_max) = y_range.unwrap_or_else(|| {
        series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), y| (lo.min(y), hi.max(y)))
    });
    if !y_min.is_finite() || !y_max.is_finite() {
        (y_min, y_max) = (0.0, 1.0);
    }
    if y_max - y_min < 1e-9 {
        y_max = y_min + 1.0;
    }
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min { (x_min, x_max) } else { (0.0, 1.0) };
    for i in 0..=4 {
        let v = y_min + (y_max - y_min) * i as f64 / 4.0;
        let y = py1 - ((py1 - py0) as f64 * i as f64 / 4.0) as i64;
        c.rect(px0, y, px1, y, LIGHT);
        let label = nice(v);
        c.text(px0 - 6 - text_width(&label, 1), y - 3, &label, BLACK, 1);
    }
    for i in 0..=4 {
        let v = x_min + (x_max - x_min) * i as f64 / 4.0;
        let x = px0 + ((px1 - px0) as f64 * i as f64 / 4.0) as i64;
        let label = nice(v);
        c.text(x - text_width(&label, 1) / 2, py1 + 5, &label, BLACK, 1);
    }
    c.text(px1 - text_width(x_label, 1), py1 + 15, x_label, GREY, 1);
    c.rect(px0, py0, px0, py1, GREY);
    c.rect(px0, py1, px1, py1, GREY);
    let to_px = |(x, y): (f64, f64)| {
        let fx = (x - x_min) / (x_max - x_min);
        let fy = ((y - y_min) / (y_max - y_min)).clamp(0.0, 1.0);
        (px0 + (fx * (px1 - px0) as f64) as i64, py1 - (fy * (py1 - py0) as f64) as i64)
    };
    for s in series {
        let pts: Vec<(i64, i64)> = s.points.iter().map(|&p| to_px(p)).collect();
        if pts.len() == 1 {
            c.rect(pts[0].0 - 2, pts[0].1 - 2, pts[0].0 + 2, pts[0].1 + 2, s.color);
        }
        for w in pts.windows(2) {
            c.line(w[0], w[1], s.color);
        }
    }
}

/// Grouped bars: one group per label, one bar per series within it (values 0..=`y_max`).
pub fn bar_chart(c: &mut Canvas, a: Area, title: &str, labels: &[String], series: &[(String, Rgb, Vec<f64>)], y_max: f64) {
    c.text(a.x, a.y, title, BLACK, 2);
    let mut lx = a.x;
    for (name, color, _) in series {
        c.rect(lx, a.y + 21, lx + 10, a.y + 28, *color);
        lx += 14 + c.text(lx + 14, a.y + 21, name, BLACK, 1) + 14;
    }
    let (px0, py0, px1, py1) = (a.x + 50, a.y + 40, a.x + a.w - 8, a.y + a.h - 70);
    for i in 0..=4 {
        let v = y_max * i as f64 / 4.0;
        let y = py1 - ((py1 - py0) as f64 * i as f64 / 4.0) as i64;
        c.rect(px0, y, px1, y, LIGHT);
        let label = nice(v);
        c.text(px0 - 6 - text_width(&label, 1), y - 3, &label, BLACK, 1);
    }
    c.rect(px0, py1, px1, py1, GREY);
    let group = (px1 - px0) as f64 / labels.len().max(1) as f64;
    let bar = ((group - 2.0) / series.len().max(1) as f64).max(1.0);
    for (g, label) in labels.iter().enumerate() {
        let gx = px0 as f64 + g as f64 * group + 1.0;
        for (k, (_, color, values)) in series.iter().enumerate() {
            let v = values.get(g).copied().unwrap_or(0.0).clamp(0.0, y_max);
            let h = (v / y_max * (py1 - py0) as f64) as i64;
            let x = (gx + k as f64 * bar) as i64;
            if h > 0 {
                c.rect(x, py1 - h, x + bar as i64 - 1, py1 - 1, *color);
            }
        }
        // Labels written downward, one character a row, so 40 of them fit.
        let cx = (gx + group / 2.0) as i64 - 3;
        for (i, ch) in label.chars().take(8).enumerate() {
            c.text(cx, py1 + 4 + i as i64 * 8, &ch.to_string(), BLACK, 1);
        }
    }
}
