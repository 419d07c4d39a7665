//! The instruction's values: what the navigator is asked to enter into each active field.
//!
//! Two sources:
//! - [`Values::Realistic`] (the default): every seed draws a coherent person and trip from
//!   realistic pools (names, an address whose city, ZIP code and state belong together, a
//!   Luhn-valid card number, a future expiry, a flight between two different airports with the
//!   return after the departure, ...);
//! - [`Values::Reference`]: the reference's fixed values (reference §3.4), where only the
//!   "either/or" fields and the booleans change with the seed.
//!
//! Values are plain text (no quotes, `<`, `>` or `&`), and booleans are `"true"`/`"false"`.

use serde::{Deserialize, Serialize};

use super::design::Design;
use crate::env::Field;
use crate::rng::Rng;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Values {
    /// Drawn per seed from realistic pools.
    #[default]
    Realistic,
    /// The reference implementation's fixed values.
    Reference,
}

/// US state codes the `state` select offers: every state of [`PLACES`], and the reference's CA
/// and NY.
const STATES: [&str; 12] = ["AZ", "CA", "CO", "FL", "GA", "IL", "MA", "NY", "OR", "PA", "TX", "WA"];
const CARD_TYPES: [&str; 3] = ["Credit Card", "Debit Card", "Prepaid Card"];
const CABINS: [&str; 4] = ["Economy", "Premium Economy", "Business", "First"];
const FLIGHT_TYPES: [&str; 2] = ["Oneway", "Roundtrip"];

/// Options a Select or Radio field offers, in display order (the profile value is always one of
/// them). `None` for free-text fields and unknown keys.
pub fn options(key: &str) -> Option<&'static [&'static str]> {
    match key {
        "state" => Some(&STATES),
        "credit_card_type" => Some(&CARD_TYPES),
        "cabin" => Some(&CABINS),
        "flighttype" => Some(&FLIGHT_TYPES),
        _ => None,
    }
}

/// One value per profile key of `design` (in `design.profile_keys()` order), drawn from `rng`.
///
/// A whole person and trip are drawn every time, whatever the design holds, so the values that
/// belong together (full name and first/last name, city/ZIP/state, the two dates) stay coherent
/// and the number of draws does not depend on the design.
pub fn profile(design: &Design, values: Values, rng: &mut Rng) -> Vec<Field> {
    let all = match values {
        Values::Realistic => realistic(rng),
        Values::Reference => reference(rng),
    };
    design
        .profile_keys()
        .into_iter()
        .map(|key| {
            let value = all.iter().find(|(k, _)| *k == key).map(|(_, v)| v.clone()).unwrap_or_else(|| panic!("no value for profile key {key}"));
            Field { key: key.to_string(), value }
        })
        .collect()
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

fn boolean(rng: &mut Rng) -> String {
    if rng.below(2) == 1 { "true" } else { "false" }.to_string()
}

/// Uniform in `lo..=hi`.
fn between(rng: &mut Rng, lo: u32, hi: u32) -> u32 {
    lo + rng.below((hi - lo + 1) as usize) as u32
}

// ------------------------------------------------------------------ the reference's values

fn reference(rng: &mut Rng) -> Vec<(&'static str, String)> {
    let s = |v: &str| v.to_string();
    vec![
        ("username", s("john@email.com")),
        ("password", s("pass")),
        ("captcha", s("CaPtChA")),
        ("rememberme", boolean(rng)),
        ("stayloggedin", boolean(rng)),
        ("name_first", s("John")),
        ("name_last", s("Wick")),
        ("name_full", s("John Wick")),
        ("address_line1", s("413 E Mountain View")),
        ("address_line2", s("2042")),
        ("city", s("Mountain View")),
        ("postal_code", s("95123")),
        ("state", s(pick(rng, &["CA", "NY"]))),
        ("credit_card_type", s(pick(rng, &["Credit Card", "Debit Card"]))),
        ("credit_card_number", s("0000 0000 0000 0000")),
        ("credit_card_expiration", s("2025")),
        ("credit_card_verification_code", s("123")),
        ("departureairport", s("San Francisco Airport (SFO)")),
        ("destinationairport", s("Los Angeles Airport (LAX)")),
        ("departuredate", s("10/02/2020")),
        ("destinationdate", s("10/03/2020")),
        ("numberofpeople", between(rng, 1, 5).to_string()),
        ("cabin", s(pick(rng, &["Economy", "First"]))),
        ("flighttype", s(pick(rng, &["Oneway", "Roundtrip"]))),
    ]
}

// ------------------------------------------------------------------ realistic pools

const FIRST_NAMES: [&str; 40] = [
    "Olivia", "Liam", "Amara", "Mateo", "Priya", "Noah", "Sofia", "Ethan", "Aisha", "Lucas", "Mei", "Diego", "Hannah", "Omar", "Chloe", "Kenji",
    "Isabel", "Marcus", "Fatima", "Daniel", "Grace", "Andre", "Nadia", "Samuel", "Leah", "Tomas", "Zoe", "Ravi", "Elena", "Jamal", "Ingrid", "Felix",
    "Yuki", "Carmen", "Owen", "Lucia", "Victor", "Maya", "Hugo", "Rosa",
];

const LAST_NAMES: [&str; 40] = [
    "Johnson", "Garcia", "Nguyen", "Patel", "Smith", "Kim", "Martinez", "Brown", "Okafor", "Rossi", "Chen", "Lopez", "Williams", "Haddad", "Novak",
    "Tanaka", "Anderson", "Silva", "Murphy", "Khan", "Schmidt", "Davis", "Moreno", "Clark", "Ivanova", "Lewis", "Mensah", "Walker", "Fischer",
    "Reyes", "Hughes", "Larsen", "Sato", "Bennett", "Costa", "Price", "Dubois", "Foster", "Kowalski", "Ward",
];

const EMAIL_DOMAINS: [&str; 6] = ["gmail.com", "outlook.com", "yahoo.com", "icloud.com", "proton.me", "fastmail.com"];

const PASSWORD_WORDS: [&str; 16] = [
    "Sunset", "Maple", "Falcon", "River", "Copper", "Orbit", "Velvet", "Harbor", "Summit", "Pepper", "Cobalt", "Meadow", "Tiger", "Lunar", "Breeze",
    "Cactus",
];

const PASSWORD_SYMBOLS: [&str; 6] = ["!", "#", "$", "%", "*", "?"];

/// Letters and digits a captcha draws from (no 0/O, 1/l/I look-alikes).
const CAPTCHA_CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789";

const STREETS: [&str; 20] = [
    "Oak",
    "Maple",
    "Cedar",
    "Pine",
    "Elm",
    "Washington",
    "Lincoln",
    "Park",
    "Lake",
    "Hill",
    "Sunset",
    "Highland",
    "Mission",
    "Market",
    "Church",
    "Spring",
    "River",
    "Forest",
    "Valley",
    "Madison",
];

const STREET_SUFFIXES: [&str; 9] = ["Street", "Avenue", "Road", "Boulevard", "Lane", "Drive", "Court", "Way", "Place"];

const DIRECTIONS: [&str; 4] = ["N", "S", "E", "W"];

/// (city, ZIP code, state): real places with one of their real ZIP codes.
const PLACES: [(&str, &str, &str); 24] = [
    ("Mountain View", "94041", "CA"),
    ("San Francisco", "94110", "CA"),
    ("Los Angeles", "90012", "CA"),
    ("San Diego", "92101", "CA"),
    ("Seattle", "98101", "WA"),
    ("Spokane", "99201", "WA"),
    ("Portland", "97205", "OR"),
    ("Eugene", "97401", "OR"),
    ("Austin", "78701", "TX"),
    ("Houston", "77002", "TX"),
    ("Dallas", "75201", "TX"),
    ("Denver", "80202", "CO"),
    ("Boulder", "80302", "CO"),
    ("Phoenix", "85004", "AZ"),
    ("Tucson", "85701", "AZ"),
    ("Chicago", "60601", "IL"),
    ("Boston", "02108", "MA"),
    ("Cambridge", "02139", "MA"),
    ("New York", "10001", "NY"),
    ("Buffalo", "14202", "NY"),
    ("Miami", "33130", "FL"),
    ("Orlando", "32801", "FL"),
    ("Atlanta", "30303", "GA"),
    ("Philadelphia", "19103", "PA"),
];

/// (city, IATA code) of the airports flights use.
const AIRPORTS: [(&str, &str); 22] = [
    ("San Francisco", "SFO"),
    ("Los Angeles", "LAX"),
    ("New York", "JFK"),
    ("Chicago", "ORD"),
    ("Seattle", "SEA"),
    ("Boston", "BOS"),
    ("Denver", "DEN"),
    ("Atlanta", "ATL"),
    ("Dallas", "DFW"),
    ("Miami", "MIA"),
    ("Houston", "IAH"),
    ("Phoenix", "PHX"),
    ("Las Vegas", "LAS"),
    ("Orlando", "MCO"),
    ("Philadelphia", "PHL"),
    ("Portland", "PDX"),
    ("San Diego", "SAN"),
    ("Minneapolis", "MSP"),
    ("London", "LHR"),
    ("Paris", "CDG"),
    ("Tokyo", "HND"),
    ("Toronto", "YYZ"),
];

/// Year of the flights (not a leap year).
const FLIGHT_YEAR: u32 = 2027;
const MONTH_DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

fn realistic(rng: &mut Rng) -> Vec<(&'static str, String)> {
    let first = pick(rng, &FIRST_NAMES);
    let last = pick(rng, &LAST_NAMES);
    let username = username(rng, first, last);
    let password = password(rng);
    let captcha = captcha(rng);
    let rememberme = boolean(rng);
    let stayloggedin = boolean(rng);
    let line1 = street_address(rng);
    let line2 = apartment(rng);
    let (city, zip, state) = PLACES[rng.below(PLACES.len())];
    let card_type = pick(rng, &CARD_TYPES);
    let card_number = card_number(rng);
    let expiration = format!("{:02}/{:02}", between(rng, 1, 12), between(rng, 27, 31));
    let cvv = format!("{:03}", between(rng, 0, 999));
    let from = rng.below(AIRPORTS.len());
    let to = (from + 1 + rng.below(AIRPORTS.len() - 1)) % AIRPORTS.len();
    let airport = |i: usize| format!("{} Airport ({})", AIRPORTS[i].0, AIRPORTS[i].1);
    let leave = between(rng, 0, 339);
    let back = leave + between(rng, 1, 21);
    let people = between(rng, 1, 6);
    let cabin = pick(rng, &CABINS);
    let flighttype = pick(rng, &FLIGHT_TYPES);
    vec![
        ("username", username),
        ("password", password),
        ("captcha", captcha),
        ("rememberme", rememberme),
        ("stayloggedin", stayloggedin),
        ("name_first", first.to_string()),
        ("name_last", last.to_string()),
        ("name_full", format!("{first} {last}")),
        ("address_line1", line1),
        ("address_line2", line2),
        ("city", city.to_string()),
        ("postal_code", zip.to_string()),
        ("state", state.to_string()),
        ("credit_card_type", card_type.to_string()),
        ("credit_card_number", card_number),
        ("credit_card_expiration", expiration),
        ("credit_card_verification_code", cvv),
        ("departureairport", airport(from)),
        ("destinationairport", airport(to)),
        ("departuredate", date(leave)),
        ("destinationdate", date(back)),
        ("numberofpeople", people.to_string()),
        ("cabin", cabin.to_string()),
        ("flighttype", flighttype.to_string()),
    ]
}

fn username(rng: &mut Rng, first: &str, last: &str) -> String {
    let (f, l) = (first.to_lowercase(), last.to_lowercase());
    let initial = &f[..1];
    let n = between(rng, 1, 99);
    let domain = pick(rng, &EMAIL_DOMAINS);
    match rng.below(5) {
        0 => format!("{f}.{l}@{domain}"),
        1 => format!("{initial}{l}{n}@{domain}"),
        2 => format!("{f}{}{n}", &l[..1]),
        3 => format!("{f}_{l}"),
        _ => format!("{l}.{f}{n}@{domain}"),
    }
}

fn password(rng: &mut Rng) -> String {
    let word = pick(rng, &PASSWORD_WORDS);
    let digits = between(rng, 2, 4);
    let mut s = word.to_string();
    for _ in 0..digits {
        s.push(char::from(b'0' + rng.below(10) as u8));
    }
    if rng.below(3) > 0 {
        s.push_str(pick(rng, &PASSWORD_SYMBOLS));
    }
    s
}

/// 6 or 7 characters with both upper- and lower-case letters.
fn captcha(rng: &mut Rng) -> String {
    loop {
        let len = between(rng, 6, 7) as usize;
        let s: String = (0..len).map(|_| char::from(CAPTCHA_CHARS[rng.below(CAPTCHA_CHARS.len())])).collect();
        if s.chars().any(|c| c.is_ascii_uppercase()) && s.chars().any(|c| c.is_ascii_lowercase()) {
            return s;
        }
    }
}

fn street_address(rng: &mut Rng) -> String {
    let number = between(rng, 1, 9999);
    let name = pick(rng, &STREETS);
    let suffix = pick(rng, &STREET_SUFFIXES);
    if rng.below(4) == 0 { format!("{number} {} {name} {suffix}", pick(rng, &DIRECTIONS)) } else { format!("{number} {name} {suffix}") }
}

fn apartment(rng: &mut Rng) -> String {
    let n = between(rng, 1, 40);
    match rng.below(4) {
        0 => format!("Apt {n}"),
        1 => format!("Unit {n}{}", char::from(b'A' + rng.below(6) as u8)),
        2 => format!("Suite {}", between(rng, 100, 999)),
        _ => format!("{}", between(rng, 1000, 4999)),
    }
}

/// A Luhn-valid 16-digit number (Visa, Mastercard or Discover prefix), in groups of four.
fn card_number(rng: &mut Rng) -> String {
    let prefix: Vec<u8> = match rng.below(3) {
        0 => vec![4],
        1 => vec![5, 1 + rng.below(5) as u8],
        _ => vec![6, 0, 1, 1],
    };
    let mut digits = prefix;
    while digits.len() < 15 {
        digits.push(rng.below(10) as u8);
    }
    digits.push(luhn_check_digit(&digits));
    let mut s = String::with_capacity(19);
    for (i, d) in digits.iter().enumerate() {
        if i > 0 && i % 4 == 0 {
            s.push(' ');
        }
        s.push(char::from(b'0' + d));
    }
    s
}

/// The digit that makes `payload` followed by it pass the Luhn check.
fn luhn_check_digit(payload: &[u8]) -> u8 {
    let sum: u32 = payload
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = d as u32;
            if i % 2 == 0 {
                let x = 2 * d;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    ((10 - sum % 10) % 10) as u8
}

/// Day `day` (0-based) of [`FLIGHT_YEAR`] as MM/DD/YYYY.
fn date(day: u32) -> String {
    let mut d = day;
    for (m, &len) in MONTH_DAYS.iter().enumerate() {
        if d < len {
            return format!("{:02}/{:02}/{FLIGHT_YEAR}", m + 1, d + 1);
        }
        d -= len;
    }
    panic!("day {day} is past the end of {FLIGHT_YEAR}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gminiwob::primitive::{self, Kind};

    fn all_keys() -> Design {
        let entries: Vec<(usize, u32)> = primitive::active().map(|p| (p.index, 0)).collect();
        Design::from_entries(None, &entries).unwrap()
    }

    fn map(fields: &[Field]) -> std::collections::HashMap<&str, &str> {
        fields.iter().map(|f| (f.key.as_str(), f.value.as_str())).collect()
    }

    fn luhn_ok(number: &str) -> bool {
        let digits: Vec<u32> = number.chars().filter(|c| !c.is_whitespace()).map(|c| c.to_digit(10).unwrap()).collect();
        let sum: u32 = digits.iter().rev().enumerate().map(|(i, &d)| if i % 2 == 1 { if 2 * d > 9 { 2 * d - 9 } else { 2 * d } } else { d }).sum();
        sum.is_multiple_of(10)
    }

    fn day_of_year(date: &str) -> u32 {
        let parts: Vec<u32> = date.split('/').map(|p| p.parse().unwrap()).collect();
        assert_eq!(parts[2], FLIGHT_YEAR, "{date}");
        assert!((1..=12).contains(&parts[0]) && parts[1] >= 1 && parts[1] <= MONTH_DAYS[parts[0] as usize - 1], "{date}");
        MONTH_DAYS[..parts[0] as usize - 1].iter().sum::<u32>() + parts[1] - 1
    }

    #[test]
    fn every_select_and_radio_field_has_options() {
        for p in primitive::PRIMITIVES.iter() {
            let has = p.field.and_then(options).is_some();
            assert_eq!(has, matches!(p.kind, Kind::Select | Kind::Radio), "{}", p.name);
        }
        assert!(options("username").is_none() && options("nope").is_none());
        let states = options("state").unwrap();
        for (_, _, s) in PLACES {
            assert!(states.contains(&s), "{s} is missing from the state list");
        }
        assert!(states.contains(&"CA") && states.contains(&"NY"));
    }

    #[test]
    fn one_value_per_key_in_design_order() {
        let d = Design::from_entries(None, &[(40, 0), (39, 0), (20, 0), (18, 1), (39, 1)]).unwrap();
        for values in [Values::Realistic, Values::Reference] {
            let p = profile(&d, values, &mut Rng::new(3));
            let keys: Vec<&str> = p.iter().map(|f| f.key.as_str()).collect();
            assert_eq!(keys, ["postal_code", "username", "name_first"]);
        }
        assert!(profile(&Design::from_entries(None, &[(20, 0)]).unwrap(), Values::Realistic, &mut Rng::new(1)).is_empty());
        let all = profile(&all_keys(), Values::Realistic, &mut Rng::new(1));
        assert_eq!(all.len(), 24);
    }

    #[test]
    fn realistic_values_are_coherent_and_plain() {
        let d = all_keys();
        let mut seen_users = std::collections::HashSet::new();
        let mut seen_cabins = std::collections::HashSet::new();
        for seed in 0..400 {
            let p = profile(&d, Values::Realistic, &mut Rng::new(seed));
            let v = map(&p);
            for f in &p {
                assert!(!f.value.is_empty(), "{} is empty", f.key);
                assert!(!f.value.contains(['"', '\'', '<', '>', '&']), "{}={}", f.key, f.value);
                assert_eq!(f.value.trim(), f.value);
                if let Some(opts) = options(&f.key) {
                    assert!(opts.contains(&f.value.as_str()), "{}={}", f.key, f.value);
                }
            }
            assert_eq!(v["name_full"], format!("{} {}", v["name_first"], v["name_last"]));
            let place = PLACES.iter().find(|(c, _, _)| *c == v["city"]).unwrap();
            assert_eq!((place.1, place.2), (v["postal_code"], v["state"]));
            let cc = v["credit_card_number"];
            assert_eq!(cc.len(), 19, "{cc}");
            assert!(cc.split(' ').all(|g| g.len() == 4 && g.chars().all(|c| c.is_ascii_digit())), "{cc}");
            assert!(luhn_ok(cc), "{cc} fails the Luhn check");
            let exp = v["credit_card_expiration"];
            let (mm, yy) = exp.split_once('/').unwrap();
            assert!((1..=12).contains(&mm.parse::<u32>().unwrap()) && mm.len() == 2, "{exp}");
            assert!(yy.parse::<u32>().unwrap() >= 27 && yy.len() == 2, "{exp}");
            let cvv = v["credit_card_verification_code"];
            assert!(cvv.len() == 3 && cvv.chars().all(|c| c.is_ascii_digit()));
            assert_ne!(v["departureairport"], v["destinationairport"]);
            for k in ["departureairport", "destinationairport"] {
                let a = v[k];
                assert!(a.contains(" Airport (") && a.ends_with(')'), "{a}");
            }
            assert!(day_of_year(v["departuredate"]) < day_of_year(v["destinationdate"]));
            let n: u32 = v["numberofpeople"].parse().unwrap();
            assert!((1..=6).contains(&n));
            for k in ["rememberme", "stayloggedin"] {
                assert!(v[k] == "true" || v[k] == "false");
            }
            let c = v["captcha"];
            assert!((6..=7).contains(&c.len()) && c.chars().all(|c| c.is_ascii_alphanumeric()));
            assert!(c.chars().any(|c| c.is_ascii_uppercase()) && c.chars().any(|c| c.is_ascii_lowercase()));
            seen_users.insert(v["username"].to_string());
            seen_cabins.insert(v["cabin"].to_string());
        }
        assert!(seen_users.len() > 300, "usernames vary ({})", seen_users.len());
        assert_eq!(seen_cabins.len(), 4);
    }

    #[test]
    fn reference_values_are_the_references() {
        let d = all_keys();
        let mut states = std::collections::HashSet::new();
        let mut people = std::collections::HashSet::new();
        for seed in 0..100 {
            let p = profile(&d, Values::Reference, &mut Rng::new(seed));
            let v = map(&p);
            assert_eq!(v["username"], "john@email.com");
            assert_eq!(v["password"], "pass");
            assert_eq!(v["captcha"], "CaPtChA");
            assert_eq!((v["name_first"], v["name_last"], v["name_full"]), ("John", "Wick", "John Wick"));
            assert_eq!((v["address_line1"], v["address_line2"]), ("413 E Mountain View", "2042"));
            assert_eq!((v["city"], v["postal_code"]), ("Mountain View", "95123"));
            assert_eq!(v["credit_card_number"], "0000 0000 0000 0000");
            assert_eq!(v["credit_card_expiration"], "2025");
            assert_eq!(v["credit_card_verification_code"], "123");
            assert_eq!(v["departureairport"], "San Francisco Airport (SFO)");
            assert_eq!(v["destinationairport"], "Los Angeles Airport (LAX)");
            assert_eq!((v["departuredate"], v["destinationdate"]), ("10/02/2020", "10/03/2020"));
            assert!(["Credit Card", "Debit Card"].contains(&v["credit_card_type"]));
            assert!(["Economy", "First"].contains(&v["cabin"]));
            assert!(["Oneway", "Roundtrip"].contains(&v["flighttype"]));
            for f in &p {
                if let Some(opts) = options(&f.key) {
                    assert!(opts.contains(&f.value.as_str()), "{}={}", f.key, f.value);
                }
            }
            states.insert(v["state"].to_string());
            people.insert(v["numberofpeople"].parse::<u32>().unwrap());
        }
        assert_eq!(states.len(), 2);
        assert_eq!(people, (1..=5).collect());
    }

    #[test]
    fn same_seed_same_values() {
        let d = all_keys();
        let a = profile(&d, Values::Realistic, &mut Rng::new(9));
        assert_eq!(a, profile(&d, Values::Realistic, &mut Rng::new(9)));
        assert_ne!(a, profile(&d, Values::Realistic, &mut Rng::new(10)));
        assert_eq!(serde_json::to_string(&Values::Reference).unwrap(), "\"reference\"");
        assert_eq!(Values::default(), Values::Realistic);
    }

    #[test]
    fn luhn_and_dates() {
        assert!(luhn_ok("4111 1111 1111 1111"));
        assert_eq!(luhn_check_digit(&[4, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]), 1);
        assert_eq!(date(0), "01/01/2027");
        assert_eq!(date(31), "02/01/2027");
        assert_eq!(date(364), "12/31/2027");
    }
}
