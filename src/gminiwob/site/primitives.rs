//! Each primitive's elements (the reference's Bootstrap markup, laid out by `layout`) and the
//! cosmetic content drawn for it from the site's seeded stream: products, prices, slides, links.

use super::active_id;
use super::tree::{Element, Tree};
use crate::gminiwob::layout::{self, Bounds};
use crate::gminiwob::primitive::{InputType, Kind, Primitive};
use crate::gminiwob::profile;
use crate::rng::Rng;

const PRODUCTS: [&str; 20] = [
    "Wireless Headphones",
    "Espresso Maker",
    "Running Shoes",
    "Desk Lamp",
    "Canvas Backpack",
    "Smart Watch",
    "Yoga Mat",
    "Water Bottle",
    "Bluetooth Speaker",
    "Sunglasses",
    "Coffee Mug",
    "Notebook Set",
    "Salt & Pepper Set",
    "Throw Pillow",
    "Phone Case",
    "Scented Candle",
    "Travel Mug",
    "Ceramic Plant Pot",
    "Wall Clock",
    "Cutting Board",
];

const BLURBS: [&str; 8] = [
    "Free shipping on orders over $35.",
    "Top rated by our customers.",
    "Limited stock, order soon.",
    "New arrival this week.",
    "Back in stock.",
    "Only a few left.",
    "Ships in 2 days.",
    "Best seller in its category.",
];

const SLIDES: [(&str, &str); 6] = [
    ("Summer sale", "Up to 40% off outdoor gear"),
    ("New arrivals", "Fresh picks for the season"),
    ("Free shipping", "On every order this weekend"),
    ("Home essentials", "Make your space yours"),
    ("Tech week", "Deals on gadgets & audio"),
    ("Gift ideas", "Something for everyone"),
];

const DEAL_TITLES: [&str; 4] = ["Deal of the day", "Today's deal", "Flash sale", "Limited-time offer"];
const DEAL_LINKS: [&str; 3] = ["Shop now", "See the deal", "View offer"];
const WELCOMES: [&str; 5] = ["Welcome back", "Welcome to GShopping", "Hello again", "Good to see you", "Sign in to continue"];
const FOOTER_LINKS: [&str; 8] = ["About", "Contact", "Privacy", "Terms", "Help", "Returns", "Careers", "Shipping"];
const NAV_LINKS: [&str; 5] = ["Home", "Login", "Account", "Cart", "Checkout"];
const BRAND: &str = "GShopping";
const CENTS: [u32; 4] = [0, 49, 95, 99];
/// Number of image colour classes (`c0`..`c7`) the page's stylesheet defines.
const IMAGE_COLOURS: usize = 8;

pub(super) struct Renderer {
    pub(super) rng: Rng,
    pub(super) tree: Tree,
}

impl Renderer {
    fn push(&mut self, parent: usize, el: Element) -> usize {
        self.tree.push(Some(parent), el)
    }

    /// `k` distinct indices below `n`, in random order.
    fn distinct(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..n).collect();
        for i in 0..k.min(n) {
            let j = i + self.rng.below(n - i);
            idx.swap(i, j);
        }
        idx.truncate(k);
        idx
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.rng.below(items.len())]
    }

    /// A price in cents: 1 to 50 dollars.
    fn price(&mut self) -> u32 {
        let dollars = 1 + self.rng.below(50) as u32;
        let cents = CENTS[self.rng.below(CENTS.len())];
        if dollars == 50 { 5000 } else { dollars * 100 + cents }
    }

    fn image(&mut self, parent: usize, b: Bounds, extra_class: &str, label: &str) {
        let c = self.rng.below(IMAGE_COLOURS);
        self.push(parent, Element::new("div", b).class(&format!("img {extra_class} c{c}")).attr("role", "img").attr("aria-label", label));
    }

    /// Renders one primitive in `slot` (its left, top and width; the height is the primitive's
    /// own) under `parent`, and returns its height.
    pub(super) fn primitive(&mut self, parent: usize, slot: Bounds, prim: &Primitive, page: u32, occ: u32, last: bool) -> i32 {
        let name = prim.name;
        let group = format!("group_{name}_p{page}");
        let passive = format!("actionable_{name}_p{page}");
        let label = prim.label;
        let at = |h: i32| Bounds::new(slot.left, slot.top, slot.width, h);
        match prim.kind {
            Kind::Input(t) => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("inputs are fields");
                let g = layout::text_field(slot.width);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-group"));
                self.push(w, Element::new("label", g.label).attr("for", id.clone()).line(label));
                let mut input = Element::new("input", g.control).class("form-control");
                input = match t {
                    // A number field is a text field that asks for digits: Chrome filters and
                    // localises what is typed into `type=number` in ways a simulator cannot
                    // follow exactly, and agents type anything into any field.
                    InputType::Number => input.attr("type", "text").attr("inputmode", "numeric"),
                    _ => input.attr("type", t.html()),
                };
                self.push(w, input.id(id).attr("data-field", key).attr("placeholder", label).attr("name", name).attr("aria-label", label));
                g.height
            }
            Kind::Select => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("selects are fields");
                let g = layout::text_field(slot.width);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-group"));
                self.push(w, Element::new("label", g.label).attr("for", id.clone()).line(label));
                let sel = self.push(
                    w,
                    Element::new("select", g.control)
                        .class("form-control")
                        .id(id)
                        .attr("data-field", key)
                        .attr("name", name)
                        .attr("aria-label", label),
                );
                self.push(sel, Element::option("", "Choose…").flag("disabled").flag("selected"));
                for o in profile::options(key).expect("select fields have options") {
                    self.push(sel, Element::option(o, o));
                }
                g.height
            }
            Kind::Checkbox => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("checkboxes are fields");
                let g = layout::checkbox(slot.width);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-check"));
                self.push(
                    w,
                    Element::new("input", g.input)
                        .attr("type", "checkbox")
                        .class("form-check-input")
                        .id(id.clone())
                        .attr("data-field", key)
                        .attr("name", name)
                        .attr("aria-label", label),
                );
                self.push(w, Element::new("label", g.label).class("form-check-label").attr("for", id).line(label));
                g.height
            }
            Kind::Radio => {
                let id = active_id(prim, occ);
                let key = prim.field.expect("radio groups are fields");
                let options = profile::options(key).expect("radio fields have options");
                let g = layout::radio_group(slot.width, options);
                let w = self.push(parent, Element::new("div", at(g.height)).id(group).class("form-group"));
                self.push(w, Element::new("div", g.title).class("group-label").line(label));
                let rg = self.push(
                    w,
                    Element::new("div", g.group)
                        .id(id.clone())
                        .class(&format!("{name}root radio-group"))
                        .attr("data-field", key)
                        .attr("role", "radiogroup")
                        .attr("aria-label", label),
                );
                for (k, (o, (cell, input, lab))) in options.iter().zip(&g.items).enumerate() {
                    let item = self.push(rg, Element::new("div", *cell).class("form-check"));
                    let rid = format!("{id}_i{k}");
                    self.push(
                        item,
                        Element::new("input", *input)
                            .attr("type", "radio")
                            .class("form-check-input")
                            .attr("name", format!("{name}_{occ}"))
                            .id(rid.clone())
                            .attr("value", *o),
                    );
                    self.push(item, Element::new("label", *lab).class("form-check-label").attr("for", rid).line(*o));
                }
                g.height
            }
            Kind::NextButton | Kind::SubmitButton => {
                let b = layout::block_button(slot.width);
                let w = self.push(parent, Element::new("div", at(b.height)).id(group));
                let mut button = Element::new("button", b).attr("type", "button").id(passive).class("btn btn-primary btn-block").text(label);
                // Next buttons open the following page except on the last; submit buttons submit
                // only there.
                button = match (prim.kind, last) {
                    (Kind::NextButton, false) => button.attr("data-next", (page + 1).to_string()),
                    (Kind::SubmitButton, true) => button.flag("data-submit"),
                    _ => button,
                };
                self.push(w, button);
                b.height
            }
            Kind::Decoration => self.decoration(parent, slot, prim, &group, &passive),
        }
    }

    fn decoration(&mut self, parent: usize, slot: Bounds, prim: &Primitive, group: &str, passive: &str) -> i32 {
        let name = prim.name;
        let wrapper = |tag: &'static str, h: i32, class: &str| {
            let el = Element::new(tag, Bounds::new(slot.left, slot.top, slot.width, h)).id(group).class(class);
            if prim.end_on_click { el.attr("data-end", name) } else { el }
        };
        match name {
            "navbar" => {
                let g = layout::navbar(slot.width, BRAND, &NAV_LINKS);
                let w = self.push(parent, wrapper("nav", g.height, "navbar"));
                self.push(w, Element::new("a", g.brand).attr("href", "#").id(passive).class("navbar-brand").line(BRAND));
                let nav = self.push(w, Element::new("div", g.nav).class("navbar-nav"));
                for (i, (l, b)) in NAV_LINKS.iter().zip(&g.links).enumerate() {
                    let class = if i == 0 { "nav-link active" } else { "nav-link" };
                    self.push(nav, Element::new("a", *b).attr("href", "#").id(format!("{passive}_i{i}")).class(class).line(*l));
                }
                g.height
            }
            "carousel" => {
                let slides = self.distinct(SLIDES.len(), 5);
                let shown = self.rng.below(slides.len());
                let (title, sub) = SLIDES[slides[shown]];
                let g = layout::carousel(slot.width, slides.len());
                let w = self.push(parent, wrapper("div", g.height, "carousel"));
                let inner = self.push(w, Element::new("div", g.inner).class("carousel-inner"));
                self.image(inner, g.image, "slide", title);
                let cap = self.push(inner, Element::new("div", g.caption).class("carousel-caption"));
                self.push(cap, Element::new("h6", g.title).line(title));
                self.push(cap, Element::new("p", g.subtitle).line(sub));
                self.push(
                    w,
                    Element::new("a", g.prev).attr("href", "#").id(passive).class("carousel-control prev").attr("aria-label", "Previous").line("‹"),
                );
                self.push(
                    w,
                    Element::new("a", g.next)
                        .attr("href", "#")
                        .id(format!("{passive}_next"))
                        .class("carousel-control next")
                        .attr("aria-label", "Next")
                        .line("›"),
                );
                let dots = self.push(w, Element::new("div", g.indicators).class("carousel-indicators"));
                for (i, b) in g.dots.iter().enumerate() {
                    self.push(dots, Element::new("span", *b).class(if i == shown { "dot active" } else { "dot" }));
                }
                g.height
            }
            "deck" => {
                let items = self.distinct(PRODUCTS.len(), 4);
                let (cards, height) = layout::deck(slot.width, items.len());
                let w = self.push(parent, wrapper("div", height, "deck"));
                for (i, (&item, g)) in items.iter().zip(&cards).enumerate() {
                    let title = PRODUCTS[item];
                    let price = self.price();
                    let blurb = self.pick(&BLURBS);
                    let stars = 3 + self.rng.below(3);
                    let card = self.push(w, Element::new("div", g.card).class("card"));
                    self.image(card, g.image, "card-img", title);
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    let body = self.push(card, Element::new("div", g.body).class("card-body"));
                    self.push(body, Element::new("a", g.title).attr("href", "#").id(id).class("card-title").line(title));
                    self.push(body, Element::new("div", g.price).class("price").line(dollars(price)));
                    self.push(body, Element::new("p", g.text).class("card-text").text(blurb));
                    self.push(
                        body,
                        Element::new("div", g.stars)
                            .class("stars")
                            .attr("aria-label", format!("{stars} out of 5 stars"))
                            .line("★".repeat(stars) + &"☆".repeat(5 - stars)),
                    );
                }
                height
            }
            "dealmedia" => {
                let item = PRODUCTS[self.rng.below(PRODUCTS.len())];
                let title = self.pick(&DEAL_TITLES);
                let off = 10 + 5 * self.rng.below(9);
                let link = self.pick(&DEAL_LINKS);
                let g = layout::media(slot.width, link);
                let w = self.push(parent, wrapper("div", g.height, "media"));
                self.image(w, g.image, "media-img", item);
                let body = self.push(w, Element::new("div", g.body).class("media-body"));
                self.push(body, Element::new("h6", g.title).class("media-title").line(title));
                self.push(body, Element::new("p", g.text).line(format!("{item}, now {off}% off.")));
                self.push(body, Element::new("a", g.link).attr("href", "#").id(passive).line(link));
                g.height
            }
            "cart" => {
                let n = 2 + self.rng.below(3);
                let items = self.distinct(PRODUCTS.len(), n);
                let prices: Vec<u32> = (0..n).map(|_| self.price()).collect();
                let g = layout::cart(slot.width, n, "Your cart", &n.to_string());
                let w = self.push(parent, wrapper("div", g.height, "cart"));
                let title = self.push(w, Element::new("h6", g.title).class("cart-title"));
                self.push(title, Element::new("span", g.label).class("cart-label").line("Your cart"));
                self.push(title, Element::new("span", g.badge).class("badge").line(n.to_string()));
                let list = self.push(w, Element::new("ul", g.list).class("cart-list"));
                for (i, ((&item, &price), (row, name_b, price_b, remove_b))) in items.iter().zip(&prices).zip(&g.items).enumerate() {
                    let li = self.push(list, Element::new("li", *row).class("cart-item"));
                    self.push(li, Element::new("span", *name_b).class("item-name").line(PRODUCTS[item]));
                    self.push(li, Element::new("span", *price_b).class("item-price").line(dollars(price)));
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(li, Element::new("a", *remove_b).attr("href", "#").id(id).class("remove").line("Remove"));
                }
                let promo = self.push(w, Element::new("div", g.promo).class("promo"));
                self.push(
                    promo,
                    Element::new("input", g.promo_input)
                        .attr("type", "text")
                        .class("form-control")
                        .id(format!("{passive}_promo"))
                        .attr("placeholder", "Promo code")
                        .attr("aria-label", "Promo code"),
                );
                self.push(
                    promo,
                    Element::new("button", g.redeem).attr("type", "button").id(format!("{passive}_redeem")).class("btn btn-secondary").text("Redeem"),
                );
                let total = self.push(w, Element::new("div", g.total).class("cart-total"));
                self.push(total, Element::new("span", g.total_label).line("Total"));
                self.push(total, Element::new("b", g.total_value).line(dollars(prices.iter().sum())));
                g.height
            }
            "footer1" => {
                let links: Vec<&str> = self.distinct(FOOTER_LINKS.len(), 4).into_iter().map(|l| FOOTER_LINKS[l]).collect();
                let g = layout::footer(slot.width, &links);
                let w = self.push(parent, wrapper("footer", g.height, "footer"));
                for (i, (l, b)) in links.iter().zip(&g.links).enumerate() {
                    let id = if i == 0 { passive.to_string() } else { format!("{passive}_i{i}") };
                    self.push(w, Element::new("a", *b).attr("href", "#").id(id).line(*l));
                }
                self.push(w, Element::new("div", g.copyright).class("copyright").line("© 2027 GShopping"));
                g.height
            }
            "forgotpassowrd" | "forgotusername" => {
                let (line, link) = layout::link_line(slot.width, prim.label);
                let w = self.push(parent, wrapper("div", line.height, "forgot"));
                self.push(w, Element::new("a", link).attr("href", "#").id(passive).line(prim.label));
                line.height
            }
            "header" | "header_login" | "header_select_items" => {
                let title = match name {
                    "header" => self.pick(&WELCOMES),
                    _ => prim.label,
                };
                let b = layout::header(slot.width);
                let w = self.push(parent, wrapper("div", b.height, "page-header"));
                self.push(w, Element::new("h5", b).id(passive).line(title));
                b.height
            }
            "inpgroup1" => {
                let g = layout::search_bar(slot.width);
                let w = self.push(parent, wrapper("div", g.height, "input-group"));
                self.push(
                    w,
                    Element::new("input", g.input)
                        .attr("type", "text")
                        .class("form-control")
                        .id(passive)
                        .attr("name", "search")
                        .attr("placeholder", "Search")
                        .attr("aria-label", "Search"),
                );
                self.push(
                    w,
                    Element::new("button", g.button).attr("type", "button").id(format!("{passive}_go")).class("btn btn-secondary").text("Go"),
                );
                g.height
            }
            other => unreachable!("no decoration named {other}"),
        }
    }
}

/// Cents as "$12.49".
fn dollars(cents: u32) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}
