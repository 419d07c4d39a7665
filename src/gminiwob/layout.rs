//! The geometry of a generated site: every element's box, in integer CSS pixels, computed here
//! rather than by the browser's flowing layout, so that a site's boxes do not depend on fonts and
//! the native simulator (`super::sim`) sees exactly the boxes the live page has.
//!
//! The renderer (`super::site`) writes each box as the element's inline `left/top/width/height`;
//! the page's stylesheet (`tasks/gminiwob.html`) makes every element under `#gsite`
//! `position: absolute; box-sizing: border-box; margin: 0`, gives containers no border (cards
//! draw theirs as a box shadow, which takes no room), and only paints. A box is relative to its
//! parent's top-left corner; text never changes a box (single lines are cut with an ellipsis).
//!
//! Pages are a column of [`SITE_WIDTH`] pixels: the navigation bar on top, the blocks before the
//! form, the form card, the footer. Widths of text (links in a row, radio labels) are estimated
//! with [`text_width`] from the advance widths of DejaVu Sans, the widest of the fonts the page
//! asks for, so text fits its box in any of them.

/// An element's box: integer CSS pixels relative to its parent's top-left corner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub left: i32,
    pub top: i32,
    pub width: i32,
    pub height: i32,
}

impl Bounds {
    pub const fn new(left: i32, top: i32, width: i32, height: i32) -> Self {
        Bounds { left, top, width, height }
    }
    pub const fn right(&self) -> i32 {
        self.left + self.width
    }
    pub const fn bottom(&self) -> i32 {
        self.top + self.height
    }
}

/// The task frame a generated site shows in (`tasks/gminiwob.html`'s page), in CSS pixels: the
/// Design, Train and curriculum views size their iframes to it, and the navigator divides
/// element boxes by it.
pub const FRAME_SIZE: [u32; 2] = [400, 640];
/// Width of the site's column: with the scroll bar of the area around it, it fits the task
/// page's 400-pixel frame.
pub const SITE_WIDTH: i32 = 384;
/// Side margin of the blocks between the navigation bar and the footer.
pub const MARGIN: i32 = 12;
/// Width of those blocks (and of the form card).
pub const BLOCK_WIDTH: i32 = SITE_WIDTH - 2 * MARGIN;
/// Vertical space between blocks, and between a page's last block and its end.
pub const GAP: i32 = 12;
/// Inner padding of the form card.
pub const FORM_PADDING: i32 = 16;
/// Width of the form's fields.
pub const FORM_WIDTH: i32 = BLOCK_WIDTH - 2 * FORM_PADDING;
/// Space between two fields of the form.
pub const FIELD_GAP: i32 = 12;

/// Height of a text field, a select and a block button.
pub const CONTROL_HEIGHT: i32 = 36;
/// Height of a field's label line above its control.
pub const LABEL_HEIGHT: i32 = 18;
/// Label line plus the space under it.
const LABEL_SPACE: i32 = 22;
/// Height of a checkbox's or radio's row, and the size of the box itself.
const CHECK_ROW: i32 = 20;
const CHECK_SIZE: i32 = 16;

// ------------------------------------------------------------------ text widths

/// Advance width of `c` in DejaVu Sans, in em (its unitsPerEm is 2048).
fn advance(c: char) -> f32 {
    let units = match c {
        ' ' => 651,
        'a' => 1255,
        'b' | 'd' | 'g' | 'p' | 'q' => 1300,
        'c' => 1126,
        'e' => 1260,
        'f' => 721,
        'h' | 'n' | 'u' => 1298,
        'i' | 'j' | 'l' => 569,
        'k' => 1186,
        'm' => 1995,
        'o' => 1253,
        'r' => 842,
        's' => 1067,
        't' => 803,
        'v' | 'x' | 'y' => 1212,
        'w' => 1675,
        'z' => 1075,
        'A' | 'V' => 1401,
        'B' => 1405,
        'C' => 1430,
        'D' => 1577,
        'E' => 1294,
        'F' => 1178,
        'G' => 1587,
        'H' => 1540,
        'I' | 'J' => 604,
        'K' => 1343,
        'L' => 1141,
        'M' => 1767,
        'N' => 1532,
        'O' | 'Q' => 1612,
        'P' => 1235,
        'R' => 1423,
        'S' => 1300,
        'T' | 'Y' => 1251,
        'U' => 1499,
        'W' => 2025,
        'X' | 'Z' => 1403,
        '0'..='9' | '$' => 1303,
        '.' | ',' | ':' | ';' => 690,
        '\'' => 563,
        '"' => 942,
        '-' => 739,
        '(' | ')' => 799,
        '/' | '\\' => 690,
        '?' => 1087,
        '!' => 821,
        '#' => 1716,
        '%' => 1946,
        '&' => 1597,
        '@' | '…' | '©' => 2048,
        '*' => 1024,
        '+' | '=' | '<' | '>' => 1716,
        '_' => 1024,
        '★' | '☆' => 1716,
        '‹' | '›' => 1120,
        c if c.is_ascii() => 1255,
        // Wide scripts take a full em; everything else about the width of a lowercase letter.
        c if ('\u{2E80}'..='\u{FFEF}').contains(&c) => 2048,
        _ => 1300,
    };
    units as f32 / 2048.0
}

/// The width of `text` set at `px` pixels (bold when `bold`), rounded up: an estimate on the
/// wide side, so the text fits a box of this width in the page's fonts.
pub fn text_width(text: &str, px: f32, bold: bool) -> i32 {
    let em: f32 = text.chars().map(advance).sum();
    let scale = if bold { 1.12 } else { 1.0 };
    (em * px * scale).ceil() as i32
}

/// Items of `widths` laid out left to right in rows of at most `max` pixels, `gap_x` apart,
/// rows `row_height` tall and `gap_y` apart: each item's box, and the height of all rows. An
/// item wider than `max` gets a row of its own, cut to `max`.
pub fn flow(widths: &[i32], max: i32, gap_x: i32, gap_y: i32, row_height: i32) -> (Vec<Bounds>, i32) {
    let mut out = Vec::with_capacity(widths.len());
    let (mut x, mut y) = (0, 0);
    for &w in widths {
        let w = w.min(max);
        if x > 0 && x + w > max {
            x = 0;
            y += row_height + gap_y;
        }
        out.push(Bounds::new(x, y, w, row_height));
        x += w + gap_x;
    }
    let height = if widths.is_empty() { 0 } else { y + row_height };
    (out, height)
}

/// A vertical stack: each call places the next block `gap` below the previous one.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Where the next block goes when it is the first.
    start: i32,
    /// The bottom of the last block placed, if any.
    end: Option<i32>,
    gap: i32,
}

impl Column {
    pub fn new(start: i32, gap: i32) -> Self {
        Column { start, end: None, gap }
    }
    /// The top of a block `height` tall placed next.
    pub fn place(&mut self, height: i32) -> i32 {
        let top = self.end.map_or(self.start, |e| e + self.gap);
        self.end = Some(top + height);
        top
    }
    /// Places a block whose height is known only later: its top now, [`Column::close`] after.
    pub fn open(&mut self) -> i32 {
        self.end.map_or(self.start, |e| e + self.gap)
    }
    pub fn close(&mut self, top: i32, height: i32) {
        self.end = Some(top + height);
    }
    /// The bottom of the last block (or the start when nothing was placed).
    pub fn bottom(&self) -> i32 {
        self.end.unwrap_or(self.start)
    }
}

// ------------------------------------------------------------------ form fields

/// A labelled text field or select: the label line, then the control.
pub struct TextField {
    pub label: Bounds,
    pub control: Bounds,
    pub height: i32,
}

pub fn text_field(width: i32) -> TextField {
    TextField {
        label: Bounds::new(0, 0, width, LABEL_HEIGHT),
        control: Bounds::new(0, LABEL_SPACE, width, CONTROL_HEIGHT),
        height: LABEL_SPACE + CONTROL_HEIGHT,
    }
}

/// A checkbox and its label on one row.
pub struct Check {
    pub input: Bounds,
    pub label: Bounds,
    pub height: i32,
}

pub fn checkbox(width: i32) -> Check {
    Check {
        input: Bounds::new(0, (CHECK_ROW - CHECK_SIZE) / 2, CHECK_SIZE, CHECK_SIZE),
        label: Bounds::new(CHECK_SIZE + 8, 0, width - CHECK_SIZE - 8, CHECK_ROW),
        height: CHECK_ROW,
    }
}

/// A radio group: its title line, then the group holding one item (radio and label) per
/// option, in rows.
pub struct RadioGroup {
    pub title: Bounds,
    pub group: Bounds,
    /// Per option: the item (within the group), its radio and its label (within the item).
    pub items: Vec<(Bounds, Bounds, Bounds)>,
    pub height: i32,
}

pub fn radio_group(width: i32, options: &[&str]) -> RadioGroup {
    const LABEL_LEFT: i32 = CHECK_SIZE + 7;
    let label_widths: Vec<i32> = options.iter().map(|o| text_width(o, 13.0, false) + 2).collect();
    let widths: Vec<i32> = label_widths.iter().map(|w| LABEL_LEFT + w).collect();
    let (cells, rows_height) = flow(&widths, width, 18, 8, CHECK_ROW);
    let items = cells
        .into_iter()
        .map(|cell| {
            let input = Bounds::new(0, (CHECK_ROW - CHECK_SIZE) / 2, CHECK_SIZE, CHECK_SIZE);
            let label = Bounds::new(LABEL_LEFT, 0, cell.width - LABEL_LEFT, CHECK_ROW);
            (cell, input, label)
        })
        .collect();
    let top = LABEL_SPACE + 2;
    RadioGroup { title: Bounds::new(0, 0, width, LABEL_HEIGHT), group: Bounds::new(0, top, width, rows_height), items, height: top + rows_height }
}

/// A full-width button (next, submit).
pub fn block_button(width: i32) -> Bounds {
    Bounds::new(0, 0, width, CONTROL_HEIGHT + 2)
}

/// A line holding one small link ("Forgot password?"): the line and the link in it.
pub fn link_line(width: i32, text: &str) -> (Bounds, Bounds) {
    let w = (text_width(text, 12.0, false) + 2).min(width);
    (Bounds::new(0, 0, width, LABEL_HEIGHT), Bounds::new(0, 0, w, LABEL_HEIGHT))
}

// ------------------------------------------------------------------ blocks before the form

/// A page title.
pub fn header(width: i32) -> Bounds {
    Bounds::new(0, 0, width, 28)
}

/// The search bar: the field and its button.
pub struct SearchBar {
    pub input: Bounds,
    pub button: Bounds,
    pub height: i32,
}

pub fn search_bar(width: i32) -> SearchBar {
    const BUTTON: i32 = 60;
    SearchBar {
        input: Bounds::new(0, 0, width - BUTTON, CONTROL_HEIGHT),
        button: Bounds::new(width - BUTTON, 0, BUTTON, CONTROL_HEIGHT),
        height: CONTROL_HEIGHT,
    }
}

/// The navigation bar (full width): the brand on the left, the links on the right.
pub struct Navbar {
    pub brand: Bounds,
    pub nav: Bounds,
    /// Within `nav`.
    pub links: Vec<Bounds>,
    pub height: i32,
}

pub fn navbar(width: i32, brand: &str, links: &[&str]) -> Navbar {
    const ROW: i32 = 24;
    const TOP: i32 = 11;
    let brand_w = text_width(brand, 15.0, true) + 4;
    let widths: Vec<i32> = links.iter().map(|l| text_width(l, 12.0, false) + 2).collect();
    let mut x = 0;
    let mut boxes = Vec::with_capacity(widths.len());
    for w in &widths {
        boxes.push(Bounds::new(x, 0, *w, ROW));
        x += w + 10;
    }
    let nav_w = (x - 10).max(0);
    Navbar {
        brand: Bounds::new(MARGIN, TOP, brand_w, ROW),
        nav: Bounds::new(width - MARGIN - nav_w, TOP, nav_w, ROW),
        links: boxes,
        height: ROW + 2 * TOP,
    }
}

/// The carousel: one slide (image and caption), the two arrows, the indicator dots.
pub struct Carousel {
    pub inner: Bounds,
    pub image: Bounds,
    pub caption: Bounds,
    /// Within the caption.
    pub title: Bounds,
    pub subtitle: Bounds,
    pub prev: Bounds,
    pub next: Bounds,
    pub indicators: Bounds,
    /// Within the indicators.
    pub dots: Vec<Bounds>,
    pub height: i32,
}

pub fn carousel(width: i32, slides: usize) -> Carousel {
    const H: i32 = 140;
    const ARROW: i32 = 28;
    const DOT: i32 = 6;
    const DOT_GAP: i32 = 5;
    let n = slides as i32;
    let dots_w = (n * DOT + (n - 1).max(0) * DOT_GAP).max(0);
    let x0 = (width - dots_w) / 2;
    Carousel {
        inner: Bounds::new(0, 0, width, H),
        image: Bounds::new(0, 0, width, H),
        caption: Bounds::new(0, 62, width, H - 62),
        title: Bounds::new(44, 14, width - 88, 22),
        subtitle: Bounds::new(44, 38, width - 88, 18),
        prev: Bounds::new(8, (H - ARROW) / 2, ARROW, ARROW),
        next: Bounds::new(width - 8 - ARROW, (H - ARROW) / 2, ARROW, ARROW),
        indicators: Bounds::new(x0, H - 14, dots_w, DOT),
        dots: (0..n).map(|i| Bounds::new(i * (DOT + DOT_GAP), 0, DOT, DOT)).collect(),
        height: H,
    }
}

/// The deal of the day: an image beside a title, a line of text and a link.
pub struct Media {
    pub image: Bounds,
    pub body: Bounds,
    /// Within the body.
    pub title: Bounds,
    pub text: Bounds,
    pub link: Bounds,
    pub height: i32,
}

pub fn media(width: i32, link: &str) -> Media {
    const PAD: i32 = 12;
    const IMG: i32 = 72;
    let body_w = width - 3 * PAD - IMG;
    Media {
        image: Bounds::new(PAD, PAD, IMG, IMG),
        body: Bounds::new(2 * PAD + IMG, PAD, body_w, IMG),
        title: Bounds::new(0, 2, body_w, 20),
        text: Bounds::new(0, 24, body_w, 18),
        link: Bounds::new(0, 48, (text_width(link, 12.0, true) + 2).min(body_w), 18),
        height: IMG + 2 * PAD,
    }
}

/// One product card of a deck.
pub struct Card {
    pub card: Bounds,
    pub image: Bounds,
    pub body: Bounds,
    /// Within the body.
    pub title: Bounds,
    pub price: Bounds,
    /// Two lines of small text.
    pub text: Bounds,
    pub stars: Bounds,
}

/// A deck: product cards two to a row.
pub fn deck(width: i32, cards: usize) -> (Vec<Card>, i32) {
    const GAP_X: i32 = 10;
    const IMG: i32 = 64;
    const PAD: i32 = 9;
    const BODY: i32 = 104;
    let card_w = (width - GAP_X) / 2;
    let card_h = IMG + BODY;
    let inner = card_w - 2 * PAD;
    let out: Vec<Card> = (0..cards as i32)
        .map(|i| Card {
            card: Bounds::new((i % 2) * (card_w + GAP_X), (i / 2) * (card_h + GAP_X), card_w, card_h),
            image: Bounds::new(0, 0, card_w, IMG),
            body: Bounds::new(0, IMG, card_w, BODY),
            title: Bounds::new(PAD, 8, inner, 18),
            price: Bounds::new(PAD, 28, inner, 18),
            text: Bounds::new(PAD, 48, inner, 30),
            stars: Bounds::new(PAD, 80, inner, 16),
        })
        .collect();
    let rows = (cards as i32 + 1) / 2;
    let height = if rows == 0 { 0 } else { rows * card_h + (rows - 1) * GAP_X };
    (out, height)
}

/// The cart: title with a count badge, one row per item, a promo-code field, the total.
pub struct Cart {
    pub title: Bounds,
    /// Within the title.
    pub label: Bounds,
    pub badge: Bounds,
    pub list: Bounds,
    /// Per item: the row (within the list), its name, price and remove link (within the row).
    pub items: Vec<(Bounds, Bounds, Bounds, Bounds)>,
    pub promo: Bounds,
    /// Within the promo row.
    pub promo_input: Bounds,
    pub redeem: Bounds,
    pub total: Bounds,
    /// Within the total row.
    pub total_label: Bounds,
    pub total_value: Bounds,
    pub height: i32,
}

pub fn cart(width: i32, items: usize, title: &str, count: &str) -> Cart {
    const PAD: i32 = 12;
    const ROW: i32 = 34;
    let inner = width - 2 * PAD;
    let label_w = text_width(title, 14.0, true) + 2;
    let badge_w = (text_width(count, 11.0, false) + 12).max(18);
    let n = items as i32;
    let list_top = PAD + 22 + 6;
    let promo_top = list_top + n * ROW + 10;
    let total_top = promo_top + CONTROL_HEIGHT + 10;
    let row = |i: i32| {
        (
            Bounds::new(0, i * ROW, inner, ROW),
            Bounds::new(0, 7, inner - 140, 20),
            Bounds::new(inner - 132, 7, 72, 20),
            Bounds::new(inner - 56, 7, 56, 20),
        )
    };
    Cart {
        title: Bounds::new(PAD, PAD, inner, 22),
        label: Bounds::new(0, 0, label_w, 22),
        badge: Bounds::new(label_w + 6, 3, badge_w, 16),
        list: Bounds::new(PAD, list_top, inner, n * ROW),
        items: (0..n).map(row).collect(),
        promo: Bounds::new(PAD, promo_top, inner, CONTROL_HEIGHT),
        promo_input: Bounds::new(0, 0, inner - 92, CONTROL_HEIGHT),
        redeem: Bounds::new(inner - 86, 0, 86, CONTROL_HEIGHT),
        total: Bounds::new(PAD, total_top, inner, 22),
        total_label: Bounds::new(0, 0, inner / 2, 22),
        total_value: Bounds::new(inner / 2, 0, inner - inner / 2, 22),
        height: total_top + 22 + PAD,
    }
}

/// The footer (full width): its links in rows, then the copyright line.
pub struct Footer {
    pub links: Vec<Bounds>,
    pub copyright: Bounds,
    pub height: i32,
}

pub fn footer(width: i32, links: &[&str]) -> Footer {
    const PAD: i32 = 16;
    let widths: Vec<i32> = links.iter().map(|l| text_width(l, 12.0, false) + 2).collect();
    let (mut boxes, rows) = flow(&widths, width - 2 * PAD, 16, 4, 18);
    for b in &mut boxes {
        b.left += PAD;
        b.top += PAD;
    }
    let copy_top = PAD + rows + 8;
    Footer { links: boxes, copyright: Bounds::new(PAD, copy_top, width - 2 * PAD, 16), height: copy_top + 16 + PAD }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_widths_grow_with_text_size_and_weight() {
        assert_eq!(text_width("", 13.0, false), 0);
        let w = text_width("Checkout", 12.0, false);
        // DejaVu Sans at 12 px: 8 letters of about 0.59 em.
        assert!((54..=60).contains(&w), "{w}");
        assert!(text_width("Checkout", 12.0, true) > w);
        assert!(text_width("Checkout", 15.0, false) > w);
        assert!(text_width("mmmm", 12.0, false) > text_width("iiii", 12.0, false));
        assert!(text_width("漢字", 10.0, false) >= 20);
    }

    #[test]
    fn flow_wraps_rows() {
        let (b, h) = flow(&[50, 50, 50], 120, 10, 4, 20);
        assert_eq!(b, [Bounds::new(0, 0, 50, 20), Bounds::new(60, 0, 50, 20), Bounds::new(0, 24, 50, 20)]);
        assert_eq!(h, 44);
        let (b, h) = flow(&[500], 120, 10, 4, 20);
        assert_eq!((b[0].width, h), (120, 20), "too wide: cut to the row");
        assert_eq!(flow(&[], 120, 10, 4, 20).1, 0);
    }

    #[test]
    fn columns_stack_with_gaps() {
        let mut c = Column::new(5, 12);
        assert_eq!(c.place(10), 5);
        assert_eq!(c.place(20), 27);
        let top = c.open();
        assert_eq!(top, 59);
        c.close(top, 1);
        assert_eq!(c.bottom(), 60);
    }

    #[test]
    fn blocks_stay_inside_their_width() {
        let inside = |b: &Bounds, w: i32, what: &str| {
            assert!(b.left >= 0 && b.right() <= w && b.width > 0 && b.height > 0, "{what}: {b:?} in {w}");
        };
        let nav = navbar(SITE_WIDTH, "GShopping", &["Home", "Login", "Account", "Cart", "Checkout"]);
        inside(&nav.brand, SITE_WIDTH, "brand");
        inside(&nav.nav, SITE_WIDTH, "links");
        assert!(nav.brand.right() < nav.nav.left, "brand and links do not overlap");
        let radios = radio_group(FORM_WIDTH, &["Economy", "Premium Economy", "Business", "First"]);
        for (cell, _, _) in &radios.items {
            inside(cell, FORM_WIDTH, "radio");
        }
        assert_eq!(radios.height, radios.group.bottom());
        let f = footer(SITE_WIDTH, &["About", "Contact", "Privacy", "Terms"]);
        for l in &f.links {
            inside(l, SITE_WIDTH, "footer link");
        }
        let (cards, h) = deck(BLOCK_WIDTH, 4);
        assert!(cards.iter().all(|c| c.card.right() <= BLOCK_WIDTH && c.card.bottom() <= h));
        let c = cart(BLOCK_WIDTH, 3, "Your cart", "3");
        assert!(c.total.bottom() < c.height && c.list.bottom() < c.promo.top);
    }
}
