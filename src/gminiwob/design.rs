//! A design: which primitives a site has, and on which page. Data, never HTML, so designs can
//! travel in share links, demonstration files and checkpoints safely.
//!
//! The format is the reference's (CoDE's `compositional_rl/gwob` serialisation, reference §3.7):
//!
//! ```json
//! {"number_of_pages": 2, "action": [39, 34, 32, 18], "action_page": [0, 0, 0, 1]}
//! ```
//!
//! with its aliases (`number_of_nodes`, `primitive_assignments`, `node_assignments`). Primitives
//! may be given by index (0 = SKIP, 1..=40) or by name (`"username"`, `"#none#"`). Reading a
//! design does what the reference does: SKIP entries and repeated (primitive, page) pairs are
//! dropped, and with `"auto_num_pages": true` (or no page count) the count is the highest page
//! used plus one. Everything else that does not fit is refused with a message saying what.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::primitive::{self, PRIMITIVE_COUNT, Primitive, SKIP_NAME};

/// Most pages a site may have. The papers' generators use at most a handful (the shopping test
/// site has 3); ten leaves room for hand-made designs and keeps a site's DOM bounded.
pub const MAX_PAGES: u32 = 10;
/// Most entries a design may list before SKIPs and duplicates are dropped (the adversary unrolls
/// N steps; the papers' largest N is well under this).
pub const MAX_ENTRIES: usize = 200;
/// Most primitives a site may keep after SKIPs and duplicates are dropped.
pub const MAX_PLACED: usize = 80;
/// Longest design text accepted.
pub const MAX_JSON_BYTES: usize = 20_000;

/// One primitive on one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Placed {
    /// Design index of the primitive (1..=40).
    pub primitive: usize,
    pub page: u32,
}

impl Placed {
    pub fn primitive(&self) -> &'static Primitive {
        primitive::by_index(self.primitive).expect("validated designs hold known primitives")
    }
}

/// A validated, normalised design. Construct it with [`Design::new`], [`Design::from_json`] or
/// serde; all three check it, so a `Design` value is always well formed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "RawDesign", into = "RawDesign")]
pub struct Design {
    pages: u32,
    placed: Vec<Placed>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DesignError(pub String);

impl std::fmt::Display for DesignError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid design: {}", self.0)
    }
}

impl std::error::Error for DesignError {}

fn err<T>(msg: impl Into<String>) -> Result<T, DesignError> {
    Err(DesignError(msg.into()))
}

/// The wire form, as the reference writes it (indices), read leniently (aliases, names).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDesign {
    #[serde(alias = "number_of_nodes", default, skip_serializing_if = "Option::is_none")]
    number_of_pages: Option<Value>,
    #[serde(alias = "primitive_assignments", default)]
    action: Vec<Value>,
    #[serde(alias = "node_assignments", default)]
    action_page: Vec<Value>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    auto_num_pages: bool,
}

impl TryFrom<RawDesign> for Design {
    type Error = DesignError;
    fn try_from(raw: RawDesign) -> Result<Self, DesignError> {
        if raw.action.len() > MAX_ENTRIES {
            return err(format!("it lists {} primitives (at most {MAX_ENTRIES})", raw.action.len()));
        }
        if raw.action.len() != raw.action_page.len() {
            return err(format!(
                "\"action\" has {} entries but \"action_page\" has {}: each primitive needs a page",
                raw.action.len(),
                raw.action_page.len()
            ));
        }
        let mut entries = Vec::with_capacity(raw.action.len());
        for (i, (a, p)) in raw.action.iter().zip(&raw.action_page).enumerate() {
            let index = primitive_index(a).map_err(|m| DesignError(format!("entry {i}: {m}")))?;
            let page = page_number(p).map_err(|m| DesignError(format!("entry {i}: {m}")))?;
            entries.push((index, page));
        }
        let pages = match (&raw.number_of_pages, raw.auto_num_pages) {
            (None, _) | (_, true) => None,
            (Some(v), false) => Some(page_count(v)?),
        };
        Design::from_entries(pages, &entries)
    }
}

impl From<Design> for RawDesign {
    fn from(d: Design) -> Self {
        RawDesign {
            number_of_pages: Some(Value::from(d.pages)),
            action: d.placed.iter().map(|p| Value::from(p.primitive)).collect(),
            action_page: d.placed.iter().map(|p| Value::from(p.page)).collect(),
            auto_num_pages: false,
        }
    }
}

fn primitive_index(v: &Value) -> Result<usize, String> {
    match v {
        Value::Number(n) => {
            let i = n
                .as_u64()
                .filter(|&i| i <= PRIMITIVE_COUNT as u64)
                .ok_or_else(|| format!("{n} is not a primitive index (0 for SKIP, 1 to {PRIMITIVE_COUNT})"))?;
            Ok(i as usize)
        }
        Value::String(s) if s == SKIP_NAME => Ok(0),
        Value::String(s) => primitive::by_name(s).map(|p| p.index).ok_or_else(|| {
            let shown: String = s.chars().take(40).collect();
            format!("\"{shown}\" is not a primitive name")
        }),
        other => Err(format!("a primitive is an index or a name, not {}", kind_of(other))),
    }
}

fn page_number(v: &Value) -> Result<u32, String> {
    match v.as_u64() {
        Some(p) if p < MAX_PAGES as u64 => Ok(p as u32),
        Some(p) => Err(format!("page {p} is past the last page a site may have ({})", MAX_PAGES - 1)),
        None => Err(format!("a page is a whole number from 0, not {}", kind_of(v))),
    }
}

fn page_count(v: &Value) -> Result<u32, DesignError> {
    match v.as_u64() {
        Some(k) if (1..=MAX_PAGES as u64).contains(&k) => Ok(k as u32),
        Some(k) => err(format!("it has {k} pages (1 to {MAX_PAGES})")),
        None => err(format!("\"number_of_pages\" must be a whole number, not {}", kind_of(v))),
    }
}

fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => format!("\"{}\"", s.chars().take(40).collect::<String>()),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

impl Design {
    /// A design from (primitive index, page) pairs; `pages: None` counts the pages from the
    /// highest page used. SKIPs (index 0) and repeated pairs are dropped.
    pub fn from_entries(pages: Option<u32>, entries: &[(usize, u32)]) -> Result<Design, DesignError> {
        if entries.len() > MAX_ENTRIES {
            return err(format!("it lists {} primitives (at most {MAX_ENTRIES})", entries.len()));
        }
        let mut placed: Vec<Placed> = Vec::new();
        for &(index, page) in entries {
            if index == 0 {
                continue;
            }
            if primitive::by_index(index).is_none() {
                return err(format!("{index} is not a primitive index (0 for SKIP, 1 to {PRIMITIVE_COUNT})"));
            }
            if page >= MAX_PAGES {
                return err(format!("page {page} is past the last page a site may have ({})", MAX_PAGES - 1));
            }
            let p = Placed { primitive: index, page };
            if !placed.contains(&p) {
                placed.push(p);
            }
        }
        if placed.len() > MAX_PLACED {
            return err(format!("it places {} primitives (at most {MAX_PLACED})", placed.len()));
        }
        let used = placed.iter().map(|p| p.page + 1).max().unwrap_or(1);
        let pages = match pages {
            None => used,
            Some(k) if !(1..=MAX_PAGES).contains(&k) => return err(format!("it has {k} pages (1 to {MAX_PAGES})")),
            Some(k) if used > k => {
                let p = placed.iter().find(|p| p.page >= k).expect("a page past the count");
                return err(format!(
                    "{} is placed on page {}, but the design has {k} page{} (pages count from 0)",
                    p.primitive().name,
                    p.page,
                    if k == 1 { "" } else { "s" }
                ));
            }
            Some(k) => k,
        };
        Ok(Design { pages, placed })
    }

    /// Parses a design from JSON text, with a message for anything malformed.
    pub fn from_json(text: &str) -> Result<Design, DesignError> {
        if text.len() > MAX_JSON_BYTES {
            return err(format!("the text is {} bytes long (at most {MAX_JSON_BYTES})", text.len()));
        }
        let value: Value = serde_json::from_str(text).map_err(|e| DesignError(format!("it is not valid JSON ({e})")))?;
        if !value.is_object() {
            return err(format!("a design is a JSON object, not {}", kind_of(&value)));
        }
        let raw: RawDesign = serde_json::from_value(value).map_err(|e| DesignError(format!("{e}")))?;
        Design::try_from(raw)
    }

    /// The design in the reference's JSON form (indices).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a design serialises")
    }

    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// The primitives in design order.
    pub fn placed(&self) -> &[Placed] {
        &self.placed
    }

    /// The primitives on `page`, in design order.
    pub fn on_page(&self, page: u32) -> impl Iterator<Item = &Placed> {
        self.placed.iter().filter(move |p| p.page == page)
    }

    /// Profile keys of the active primitives, each once, in design order.
    pub fn profile_keys(&self) -> Vec<&'static str> {
        let mut keys: Vec<&'static str> = Vec::new();
        for p in &self.placed {
            if let Some(k) = p.primitive().field
                && !keys.contains(&k)
            {
                keys.push(k);
            }
        }
        keys
    }

    /// Number of active and passive primitives placed.
    pub fn counts(&self) -> (usize, usize) {
        let active = self.placed.iter().filter(|p| p.primitive().is_active()).count();
        (active, self.placed.len() - active)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &Design) -> Vec<(&'static str, u32)> {
        d.placed().iter().map(|p| (p.primitive().name, p.page)).collect()
    }

    #[test]
    fn reads_the_reference_format_and_normalises() {
        let d = Design::from_json(r#"{"number_of_pages": 2, "action": [39, 0, 34, 39, 32, 18], "action_page": [0, 1, 0, 0, 0, 1]}"#).unwrap();
        assert_eq!(d.pages(), 2);
        assert_eq!(names(&d), [("username", 0), ("password", 0), ("next_login_page", 0), ("firstname", 1)]);
        assert_eq!(d.profile_keys(), ["username", "password", "name_first"]);
        assert_eq!(d.counts(), (3, 1));
        // Written back in the reference's form, and read again to the same design.
        let json = d.to_json();
        assert_eq!(json, r#"{"number_of_pages":2,"action":[39,34,32,18],"action_page":[0,0,0,1]}"#);
        assert_eq!(Design::from_json(&json).unwrap(), d);
    }

    #[test]
    fn aliases_names_and_auto_pages() {
        let d = Design::from_json(
            r##"{"number_of_nodes": 1, "primitive_assignments": ["username", "#none#", "navbar", "zipcode"],
                "node_assignments": [0, 0, 2, 1], "auto_num_pages": true}"##,
        )
        .unwrap();
        assert_eq!(d.pages(), 3, "auto_num_pages counts from the highest page used");
        assert_eq!(names(&d), [("username", 0), ("navbar", 2), ("zipcode", 1)]);
        let empty = Design::from_json("{}").unwrap();
        assert_eq!((empty.pages(), empty.placed().len()), (1, 0));
        // Same (primitive, page) on another page is kept.
        let d = Design::from_entries(None, &[(39, 0), (39, 1)]).unwrap();
        assert_eq!(d.placed().len(), 2);
    }

    #[test]
    fn bad_designs_are_refused_with_what_is_wrong() {
        let e = |s: &str| Design::from_json(s).unwrap_err().to_string();
        assert!(e("{not json").contains("not valid JSON"), "{}", e("{not json"));
        assert!(e("[1,2]").contains("JSON object"));
        assert!(e(r#"{"action":[41],"action_page":[0]}"#).contains("41 is not a primitive index"));
        assert!(e(r#"{"action":[-1],"action_page":[0]}"#).contains("-1 is not a primitive index"));
        assert!(e(r#"{"action":["rm -rf"],"action_page":[0]}"#).contains("\"rm -rf\" is not a primitive name"));
        assert!(e(r#"{"action":[true],"action_page":[0]}"#).contains("index or a name"));
        assert!(e(r#"{"action":[1,2],"action_page":[0]}"#).contains("each primitive needs a page"));
        assert!(e(r#"{"action":[1],"action_page":[11]}"#).contains("page 11"));
        assert!(e(r#"{"action":[1],"action_page":[1.5]}"#).contains("whole number"));
        assert!(e(r#"{"number_of_pages":0,"action":[],"action_page":[]}"#).contains("0 pages"));
        assert!(e(r#"{"number_of_pages":99,"action":[],"action_page":[]}"#).contains("99 pages"));
        assert!(e(r#"{"number_of_pages":"two","action":[],"action_page":[]}"#).contains("whole number"));
        let beyond = e(r#"{"number_of_pages":1,"action":[39],"action_page":[1]}"#);
        assert!(beyond.contains("username is placed on page 1, but the design has 1 page"), "{beyond}");
        assert!(e(r#"{"action":[1],"action_page":[0],"html":"<script>"}"#).contains("unknown field"));
        let many = format!(r#"{{"action":[{}],"action_page":[{}]}}"#, vec!["1"; 201].join(","), vec!["0"; 201].join(","));
        assert!(e(&many).contains("201 primitives"));
        let wide: Vec<(usize, u32)> = (1..=40).flat_map(|i| (0..3).map(move |p| (i, p))).collect();
        assert!(Design::from_entries(None, &wide).unwrap_err().to_string().contains("120 primitives"));
        assert!(e(&" ".repeat(MAX_JSON_BYTES + 1)).contains("bytes long"));
    }

    #[test]
    fn serde_checks_designs_too() {
        // A design inside another structure (a task spec, a link) is validated as it is read.
        assert!(serde_json::from_str::<Design>(r#"{"action":[99],"action_page":[0]}"#).is_err());
        let d: Design = serde_json::from_str(r#"{"action":["cart"],"action_page":[0]}"#).unwrap();
        assert_eq!(names(&d), [("cart", 0)]);
    }
}
