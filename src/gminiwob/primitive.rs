//! The 40 design primitives of gMiniWoB, in the order of the reference's `CONCEPTS` table (index 0
//! is SKIP, `#none#`), with what each one is: active (it carries a profile field and counts toward
//! the reward) or passive (a distractor, or a button that moves between pages).
//!
//! Source: Gur et al., CoDE (`compositional_rl/gwob`), as summarised in
//! `shared/reference/reference-implementations.md` §3.1–3.2. The names are the reference's,
//! misspelling (`forgotpassowrd`) included, so designs written for it load here.

/// Index 0 of the design vocabulary: "add nothing" (the adversary's SKIP).
pub const SKIP_NAME: &str = "#none#";
/// Number of primitives (SKIP not counted).
pub const PRIMITIVE_COUNT: usize = 40;

/// What a primitive renders as, and so how the environment acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A text-like `<input>` (`text`, `password`, `number` as given by [`InputType`]).
    Input(InputType),
    /// A `<select>` of the field's options.
    Select,
    /// A group of radio buttons, one per option.
    Radio,
    /// A single checkbox (the field's value is `true` or `false`).
    Checkbox,
    /// A button that opens the next page (or, on the last page, does nothing).
    NextButton,
    /// The button that submits the site (only on the last page; inert elsewhere).
    SubmitButton,
    /// Everything else: navigation bars, carousels, decks, headers, links, footers, the cart.
    Decoration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputType {
    Text,
    Password,
    Number,
}

impl InputType {
    pub fn html(self) -> &'static str {
        match self {
            InputType::Text => "text",
            InputType::Password => "password",
            InputType::Number => "number",
        }
    }
}

/// Where on its page a primitive is placed. The reference puts form primitives into the page's
/// `#mainform` and everything else before it; we also keep navigation bars on top and footers at
/// the bottom, as real sites do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Slot {
    Top,
    BeforeForm,
    Form,
    Bottom,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Primitive {
    /// Index in the design vocabulary (1..=40; 0 is SKIP).
    pub index: usize,
    /// The reference's concept name.
    pub name: &'static str,
    /// The profile key of an active primitive (`None` for passive ones).
    pub field: Option<&'static str>,
    pub kind: Kind,
    pub slot: Slot,
    /// Clicking it ends the episode with raw reward −1 (the reference's `endOnClick`).
    pub end_on_click: bool,
    /// The canonical label (placeholder of inputs, text of buttons, title of headers).
    pub label: &'static str,
}

impl Primitive {
    /// Active primitives carry a profile field and count toward the reward.
    pub fn is_active(&self) -> bool {
        self.field.is_some()
    }
}

const fn p(
    index: usize,
    name: &'static str,
    field: Option<&'static str>,
    kind: Kind,
    slot: Slot,
    end_on_click: bool,
    label: &'static str,
) -> Primitive {
    Primitive { index, name, field, kind, slot, end_on_click, label }
}

use InputType::{Number, Password, Text};
use Kind::*;
use Slot::*;

/// The primitives, `PRIMITIVES[i - 1]` having index `i`.
pub const PRIMITIVES: [Primitive; PRIMITIVE_COUNT] = [
    p(1, "addressline1", Some("address_line1"), Input(Text), Form, false, "Address"),
    p(2, "addressline2", Some("address_line2"), Input(Text), Form, false, "Apt #"),
    p(3, "cabin", Some("cabin"), Radio, Form, false, "Cabin"),
    p(4, "captcha", Some("captcha"), Input(Text), Form, false, "Enter Captcha"),
    p(5, "carousel", None, Decoration, BeforeForm, true, "Carousel"),
    p(6, "cart", None, Decoration, BeforeForm, true, "Cart"),
    p(7, "cc", Some("credit_card_type"), Radio, Form, false, "Payment type"),
    p(8, "cccvv", Some("credit_card_verification_code"), Input(Text), Form, false, "CVV"),
    p(9, "ccexpdate", Some("credit_card_expiration"), Input(Text), Form, false, "Expiration date"),
    p(10, "ccnumber", Some("credit_card_number"), Input(Text), Form, false, "Credit card number"),
    p(11, "city", Some("city"), Input(Text), Form, false, "City"),
    p(12, "dealmedia", None, Decoration, BeforeForm, true, "Deal of the day"),
    p(13, "deck", None, Decoration, BeforeForm, true, "Deck"),
    p(14, "departureairport", Some("departureairport"), Input(Text), Form, false, "From"),
    p(15, "departuredate", Some("departuredate"), Input(Text), Form, false, "Departure date"),
    p(16, "destinationairport", Some("destinationairport"), Input(Text), Form, false, "To"),
    p(17, "destinationdate", Some("destinationdate"), Input(Text), Form, false, "Return date"),
    p(18, "firstname", Some("name_first"), Input(Text), Form, false, "First name"),
    p(19, "flighttype", Some("flighttype"), Radio, Form, false, "Flight type"),
    p(20, "footer1", None, Decoration, Bottom, true, "Footer"),
    p(21, "forgotpassowrd", None, Decoration, Form, true, "Forgot password?"),
    p(22, "forgotusername", None, Decoration, Form, true, "Forgot username?"),
    p(23, "fullname", Some("name_full"), Input(Text), Form, false, "Full name"),
    p(24, "header", None, Decoration, BeforeForm, false, "Header"),
    p(25, "header_login", None, Decoration, BeforeForm, false, "Login"),
    p(26, "header_select_items", None, Decoration, BeforeForm, false, "Select items"),
    p(27, "inpgroup1", None, Decoration, BeforeForm, false, "Search"),
    p(28, "lastname", Some("name_last"), Input(Text), Form, false, "Last name"),
    p(29, "navbar", None, Decoration, Top, true, "Navigation bar"),
    p(30, "next_checkout", None, NextButton, Form, false, "Checkout"),
    p(31, "next_login", None, NextButton, Form, false, "Login and Checkout"),
    p(32, "next_login_page", None, NextButton, Form, false, "Login"),
    p(33, "numberofpeople", Some("numberofpeople"), Input(Number), Form, false, "Number of people"),
    p(34, "password", Some("password"), Input(Password), Form, false, "Password"),
    p(35, "rememberme", Some("rememberme"), Checkbox, Form, false, "Remember me"),
    p(36, "state", Some("state"), Select, Form, false, "State"),
    p(37, "stayloggedin", Some("stayloggedin"), Checkbox, Form, false, "Stay logged in"),
    p(38, "submit", None, SubmitButton, Form, false, "Place Order"),
    p(39, "username", Some("username"), Input(Text), Form, false, "Username"),
    p(40, "zipcode", Some("postal_code"), Input(Text), Form, false, "Zipcode"),
];

/// The primitive with design index `index` (1..=40); `None` for 0 (SKIP) and out-of-range values.
pub fn by_index(index: usize) -> Option<&'static Primitive> {
    index.checked_sub(1).and_then(|i| PRIMITIVES.get(i))
}

/// The primitive named `name` (the reference's concept name).
pub fn by_name(name: &str) -> Option<&'static Primitive> {
    PRIMITIVES.iter().find(|p| p.name == name)
}

/// The active primitive whose profile key is `field`.
pub fn by_field(field: &str) -> Option<&'static Primitive> {
    PRIMITIVES.iter().find(|p| p.field == Some(field))
}

pub fn active() -> impl Iterator<Item = &'static Primitive> {
    PRIMITIVES.iter().filter(|p| p.is_active())
}

pub fn passive() -> impl Iterator<Item = &'static Primitive> {
    PRIMITIVES.iter().filter(|p| !p.is_active())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_matches_the_reference() {
        for (i, p) in PRIMITIVES.iter().enumerate() {
            assert_eq!(p.index, i + 1, "{} is out of place", p.name);
        }
        // CONCEPTS is a sorted key list: our order must be the same.
        let names: Vec<&str> = PRIMITIVES.iter().map(|p| p.name).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        assert_eq!(active().count(), 24);
        assert_eq!(passive().count(), 16);
        let ends: Vec<&str> = PRIMITIVES.iter().filter(|p| p.end_on_click).map(|p| p.name).collect();
        assert_eq!(ends, ["carousel", "cart", "dealmedia", "deck", "footer1", "forgotpassowrd", "forgotusername", "navbar"]);
        assert!(PRIMITIVES.iter().all(|p| !(p.is_active() && p.end_on_click)));
        let mut fields: Vec<&str> = active().filter_map(|p| p.field).collect();
        fields.sort();
        fields.dedup();
        assert_eq!(fields.len(), 24, "profile keys are unique");
    }

    #[test]
    fn lookups() {
        assert!(by_index(0).is_none() && by_index(41).is_none());
        assert_eq!(by_index(39).unwrap().name, "username");
        assert_eq!(by_name("zipcode").unwrap().field, Some("postal_code"));
        assert_eq!(by_field("credit_card_type").unwrap().name, "cc");
        assert!(by_name(SKIP_NAME).is_none());
    }
}
