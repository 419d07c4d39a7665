//! Structured fields read back from an utterance, for pages that do not give them.
//!
//! The lab's own pages hand their fields over (`core.getFields()`), but real MiniWoB++ pages
//! mostly do not: MiniWoB++ recovers them in Python, one extractor per task, from the wording of
//! the task's instruction. This module does the same in Rust for every MiniWoB task the lab has a
//! scripted oracle for, with MiniWoB++'s field names (those of its `fields.py`, which are the lab
//! pages' too except for the click-checkboxes family: MiniWoB++ gives one `target i` per named box
//! and `button`, the lab's pages one `targets` list), so the oracles can act on pages that only
//! show an utterance and WGE groups and selects fields as the authors' code did. The patterns follow the tasks'
//! wording (MiniWoB++'s, which the lab's pages copy); the multi-* tasks accept both MiniWoB's
//! "Search for … from year …" and the lab's "Find … from …, then press Submit.".
//!
//! email-inbox-nl has no pattern: its phrasings are free, and MiniWoB++ gives its natural-language
//! tasks' fields with the utterance (`getUtterance` returns both), which the lab reads directly.

use super::instruction::Field;

/// One way a task words its instruction: literal text with `{key}` holes. A hole takes any text,
/// the longest that still lets the rest match (as a greedy `(.*)` does), and the whole utterance
/// must match.
type Template = &'static str;

/// Rewrites the raw captures of a matched template (key, text) into the task's fields.
type Finish = fn(Vec<(String, String)>) -> Option<Vec<(String, String)>>;

struct Extractor {
    task: &'static str,
    templates: &'static [Template],
    finish: Finish,
}

fn as_is(fields: Vec<(String, String)>) -> Option<Vec<(String, String)>> {
    Some(fields)
}

/// "a, b,c" or "nothing" → `target 0` = a, `target 1` = b, `target 2` = c and `button` = submit:
/// MiniWoB++'s own keys for the click-checkboxes family (its `fields.py`, as in WGE's code), one
/// field per named box in the utterance's order, so that WGE's demonstration choice and replay
/// groups (both by the set of field keys) and its field selectors see what the authors' did.
/// The lab's own pages hand over one `targets` list instead (`core.getFields()`); the oracles read
/// both (`policy::oracle::forms`).
fn checkbox_targets(fields: Vec<(String, String)>) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (k, v) in fields {
        if k != "targets" {
            out.push((k, v));
            continue;
        }
        let named = if v == "nothing" { Vec::new() } else { v.split(',').map(str::trim).filter(|s| !s.is_empty()).collect() };
        out.extend(named.into_iter().enumerate().map(|(i, t)| (format!("target {i}"), t.to_string())));
    }
    out.push(("button".into(), "submit".into()));
    Some(out)
}

/// "3rd" → "3" for the `rank` field (the page words it as an ordinal; the field is the number).
fn rank_number(fields: Vec<(String, String)>) -> Option<Vec<(String, String)>> {
    fields
        .into_iter()
        .map(|(k, v)| {
            if k != "rank" {
                return Some((k, v));
            }
            let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
            (!digits.is_empty()).then_some((k, digits))
        })
        .collect()
}

/// "MM/DD/YYYY" → month, day, year as written; `None` for anything else.
fn split_date(fields: Vec<(String, String)>) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (k, v) in fields {
        if k != "date" {
            out.push((k, v));
            continue;
        }
        let parts: Vec<&str> = v.split('/').collect();
        let [m, d, y] = parts[..] else { return None };
        if ![m, d, y].iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
            return None;
        }
        out.extend([("month".into(), m.into()), ("day".into(), d.into()), ("year".into(), y.into())]);
    }
    Some(out)
}

const EMAIL: &[Template] = &[
    "Find the email by {by} and click the trash icon to {task} it.",
    "Find the email by {by} and click the {task} icon to mark it as important.",
    "Find the email by {by} and {task} to them with the text \"{message}\".",
    "Find the email by {by} and {task} that email to {to}.",
];

const CHECKBOXES: &[Template] = &["Select {targets} and click Submit."];

const EXTRACTORS: &[Extractor] = &[
    Extractor { task: "click-test", templates: &["Click the button."], finish: as_is },
    Extractor { task: "click-button", templates: &["Click on the \"{target}\" button."], finish: as_is },
    Extractor { task: "focus-text", templates: &["Focus into the textbox."], finish: as_is },
    Extractor { task: "enter-text", templates: &["Enter \"{target}\" into the text field and press Submit."], finish: as_is },
    Extractor {
        task: "login-user",
        templates: &["Enter the username \"{username}\" and the password \"{password}\" into the text fields and press login."],
        finish: as_is,
    },
    Extractor { task: "click-test-2", templates: &["Click button {target}."], finish: as_is },
    Extractor { task: "click-button-sequence", templates: &["Click button ONE, then click button TWO."], finish: as_is },
    Extractor { task: "click-link", templates: &["Click on the link \"{target}\"."], finish: as_is },
    Extractor { task: "click-dialog", templates: &["Close the dialog box by clicking the \"x\"."], finish: as_is },
    Extractor { task: "click-dialog-2", templates: &["Click the button in the dialog box labeled \"{target}\"."], finish: as_is },
    Extractor { task: "click-tab", templates: &["Click on Tab #{target}."], finish: as_is },
    Extractor { task: "click-tab-2", templates: &["Switch between the tabs to find and click on the link \"{target}\"."], finish: as_is },
    Extractor { task: "click-widget", templates: &["Click on a \"{target}\" widget."], finish: as_is },
    Extractor { task: "click-collapsible", templates: &["Expand the section below and click submit."], finish: as_is },
    Extractor { task: "focus-text-2", templates: &["Focus into the {target} input textbox."], finish: as_is },
    Extractor { task: "email-inbox", templates: EMAIL, finish: as_is },
    Extractor { task: "email-inbox-delete", templates: EMAIL, finish: as_is },
    Extractor { task: "social-media", templates: &["For the user {user}, click on the \"{button}\" button."], finish: as_is },
    Extractor {
        task: "social-media-all",
        templates: &["Click the \"{button}\" button on all posts by {user} and then click {submit}."],
        finish: as_is,
    },
    Extractor {
        task: "social-media-some",
        templates: &[
            "Click the \"{button}\" button on {amount} posts by {user} and then click {submit}.",
            "Click the \"{button}\" button on {amount} post by {user} and then click {submit}.",
        ],
        finish: as_is,
    },
    Extractor { task: "click-option", templates: &["Select {target} and click Submit."], finish: as_is },
    Extractor { task: "click-checkboxes", templates: CHECKBOXES, finish: checkbox_targets },
    Extractor { task: "click-checkboxes-large", templates: CHECKBOXES, finish: checkbox_targets },
    Extractor { task: "click-checkboxes-transfer", templates: CHECKBOXES, finish: checkbox_targets },
    Extractor { task: "click-checkboxes-soft", templates: &["Select words similar to {targets} and click Submit."], finish: checkbox_targets },
    Extractor { task: "enter-text-dynamic", templates: &["Enter \"{target}\" into the text field and press Submit."], finish: as_is },
    Extractor { task: "enter-password", templates: &["Enter the password \"{target}\" into both text fields and press submit."], finish: as_is },
    Extractor { task: "choose-list", templates: &["Select {target} from the list and click Submit."], finish: as_is },
    Extractor {
        task: "use-autocomplete",
        templates: &["Enter an item that starts with \"{start}\" and ends with \"{end}\".", "Enter an item that starts with \"{start}\"."],
        finish: as_is,
    },
    Extractor {
        task: "navigate-tree",
        templates: &["Navigate through the file tree. Find and click on the folder or file named \"{target}\"."],
        finish: as_is,
    },
    Extractor { task: "choose-date", templates: &["Select {date} as the date and hit submit."], finish: split_date },
    Extractor {
        task: "search-engine",
        templates: &["Use the textbox to enter \"{query}\" and press \"Search\", then find and click the {rank} search result."],
        finish: rank_number,
    },
    Extractor { task: "multi-orderings", templates: MOVIES, finish: as_is },
    Extractor { task: "multi-layouts", templates: MOVIES, finish: as_is },
    Extractor { task: "book-flight", templates: &["Book the {criterion} one-way flight from: {from} to: {to} on {date}."], finish: as_is },
];

const MOVIES: &[Template] = &[
    "Search for {genre} movies directed by {director} from year {year}.",
    "Find {genre} movies directed by {director} from {year}, then press Submit.",
];

/// MiniWoB++'s variants of a task that word their instruction as the task does.
const VARIANTS: &[(&str, &str)] = &[
    ("book-flight-nodelay", "book-flight"),
    ("choose-date-easy", "choose-date"),
    ("choose-date-medium", "choose-date"),
    ("choose-date-nodelay", "choose-date"),
    ("click-collapsible-nodelay", "click-collapsible"),
    ("click-tab-2-easy", "click-tab-2"),
    ("click-tab-2-medium", "click-tab-2"),
    ("click-tab-2-hard", "click-tab-2"),
    ("click-test-transfer", "click-test-2"),
    ("email-inbox-forward", "email-inbox"),
    ("email-inbox-important", "email-inbox"),
    ("email-inbox-noscroll", "email-inbox"),
    ("email-inbox-reply", "email-inbox"),
    ("email-inbox-star-reply", "email-inbox"),
    ("login-user-popup", "login-user"),
    ("use-autocomplete-nodelay", "use-autocomplete"),
];

fn extractor(task: &str) -> Option<&'static Extractor> {
    let task = VARIANTS.iter().find(|(v, _)| *v == task).map_or(task, |(_, base)| base);
    EXTRACTORS.iter().find(|e| e.task == task)
}

/// Whether the lab can read `task`'s fields from its utterance.
pub fn has_extractor(task: &str) -> bool {
    extractor(task).is_some()
}

/// The fields of `task`'s instruction read from its `utterance` (whitespace collapsed), with the
/// lab's keys; `None` when the task has no pattern or the utterance fits none of them.
pub fn extract_fields(task: &str, utterance: &str) -> Option<Vec<Field>> {
    let ex = extractor(task)?;
    let utterance = utterance.split_whitespace().collect::<Vec<_>>().join(" ");
    let captures = ex.templates.iter().find_map(|t| match_template(t, &utterance))?;
    let mut fields: Vec<Field> = (ex.finish)(captures)?.into_iter().map(|(key, value)| Field { key, value }).collect();
    fields.sort_by(|a, b| a.key.cmp(&b.key));
    Some(fields)
}

/// A lab page's own fields (`core.getFields()`) in MiniWoB++'s layout, the one [`extract_fields`]
/// reads from the utterance: the same, but for the click-checkboxes family, whose `targets` list
/// becomes one `target i` per box and `button` (see `checkbox_targets`).
pub fn miniwob_layout(task: &str, fields: &[Field]) -> Vec<Field> {
    let checkboxes = extractor(task).is_some_and(|e| e.task.starts_with("click-checkboxes"));
    let pairs: Vec<(String, String)> = fields.iter().map(|f| (f.key.clone(), f.value.clone())).collect();
    let pairs = if checkboxes { checkbox_targets(pairs).unwrap_or_default() } else { pairs };
    let mut out: Vec<Field> = pairs.into_iter().map(|(key, value)| Field { key, value }).collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Matches a whole `text` against `template`; the holes' (key, text) on success.
fn match_template(template: &str, text: &str) -> Option<Vec<(String, String)>> {
    let parts = split_template(template);
    let mut out = Vec::new();
    match_parts(&parts, text, &mut out).then_some(out)
}

enum Part<'a> {
    Lit(&'a str),
    Hole(&'a str),
}

fn split_template(t: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}').expect("a template's hole is closed");
        if open > 0 {
            parts.push(Part::Lit(&rest[..open]));
        }
        parts.push(Part::Hole(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    if !rest.is_empty() {
        parts.push(Part::Lit(rest));
    }
    parts
}

/// Backtracking match; each hole tries its longest text first.
fn match_parts(parts: &[Part], text: &str, out: &mut Vec<(String, String)>) -> bool {
    match parts.split_first() {
        None => text.is_empty(),
        Some((Part::Lit(lit), rest)) => text.strip_prefix(lit).is_some_and(|t| match_parts(rest, t, out)),
        Some((Part::Hole(key), rest)) => {
            // Candidate ends: every char boundary, longest first (a hole at the end takes all).
            let ends: Vec<usize> = match rest.first() {
                None => vec![text.len()],
                Some(Part::Lit(next)) => text.match_indices(next).map(|(i, _)| i).collect::<Vec<_>>().into_iter().rev().collect(),
                Some(Part::Hole(_)) => text.char_indices().map(|(i, _)| i).chain([text.len()]).rev().collect(),
            };
            for end in ends {
                let mark = out.len();
                out.push((key.to_string(), text[..end].to_string()));
                if match_parts(rest, &text[end..], out) {
                    return true;
                }
                out.truncate(mark);
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(task: &str, utterance: &str) -> Vec<(String, String)> {
        extract_fields(task, utterance)
            .unwrap_or_else(|| panic!("{task}: no fields from {utterance:?}"))
            .into_iter()
            .map(|f| (f.key, f.value))
            .collect()
    }

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        v.sort();
        v
    }

    /// Utterances in the tasks' wording (MiniWoB++'s), one or more per task, with the fields the
    /// lab's oracles read.
    #[test]
    fn each_task_pattern_reads_its_fields() {
        // (task, utterance, the fields read from it)
        type Case = (&'static str, &'static str, &'static [(&'static str, &'static str)]);
        let cases: &[Case] = &[
            ("click-test", "Click the button.", &[]),
            ("click-button", "Click on the \"Previous\" button.", &[("target", "Previous")]),
            ("focus-text", "Focus into the textbox.", &[]),
            ("enter-text", "Enter \"Deneen\" into the text field and press Submit.", &[("target", "Deneen")]),
            (
                "login-user",
                "Enter the username \"kanesha\" and the password \"DRbGP\" into the text fields and press login.",
                &[("username", "kanesha"), ("password", "DRbGP")],
            ),
            ("click-test-2", "Click button TWO.", &[("target", "TWO")]),
            ("click-button-sequence", "Click button ONE, then click button TWO.", &[]),
            ("click-link", "Click on the link \"operation.\".", &[("target", "operation.")]),
            ("click-dialog", "Close the dialog box by clicking the \"x\".", &[]),
            ("click-dialog-2", "Click the button in the dialog box labeled \"OK\".", &[("target", "OK")]),
            ("click-tab", "Click on Tab #3.", &[("target", "3")]),
            ("click-tab-2", "Switch between the tabs to find and click on the link \"Spokesperson.\".", &[("target", "Spokesperson.")]),
            ("click-widget", "Click on a \"textarea\" widget.", &[("target", "textarea")]),
            ("click-collapsible", "Expand the section below and click submit.", &[]),
            ("focus-text-2", "Focus into the 2nd input textbox.", &[("target", "2nd")]),
            (
                "email-inbox",
                "Find the email by Cosette and forward that email to Elwira.",
                &[("by", "Cosette"), ("task", "forward"), ("to", "Elwira")],
            ),
            (
                "email-inbox",
                "Find the email by Sheba and reply to them with the text \"Dar. Twain.\".",
                &[("by", "Sheba"), ("task", "reply"), ("message", "Dar. Twain.")],
            ),
            ("email-inbox", "Find the email by Milka and click the star icon to mark it as important.", &[("by", "Milka"), ("task", "star")]),
            ("email-inbox", "Find the email by Caterina and click the trash icon to delete it.", &[("by", "Caterina"), ("task", "delete")]),
            ("email-inbox-delete", "Find the email by Ann Lee and click the trash icon to delete it.", &[("by", "Ann Lee"), ("task", "delete")]),
            ("social-media", "For the user @keneth, click on the \"Share via DM\" button.", &[("user", "@keneth"), ("button", "Share via DM")]),
            (
                "social-media-all",
                "Click the \"Retweet\" button on all posts by @cierra and then click Submit.",
                &[("button", "Retweet"), ("user", "@cierra"), ("submit", "Submit")],
            ),
            (
                "social-media-some",
                "Click the \"Like\" button on 3 posts by @kasie and then click Submit.",
                &[("button", "Like"), ("amount", "3"), ("user", "@kasie"), ("submit", "Submit")],
            ),
            (
                "social-media-some",
                "Click the \"Share\" button on 1 post by @nullam and then click Submit.",
                &[("button", "Share"), ("amount", "1"), ("user", "@nullam"), ("submit", "Submit")],
            ),
            ("click-option", "Select 5qAbzn and click Submit.", &[("target", "5qAbzn")]),
            ("click-checkboxes", "Select nothing and click Submit.", &[("button", "submit")]),
            (
                "click-checkboxes",
                "Select sunglasses,sumitomo, raja and click Submit.",
                &[("target 0", "sunglasses"), ("target 1", "sumitomo"), ("target 2", "raja"), ("button", "submit")],
            ),
            ("click-checkboxes-large", "Select a, b and click Submit.", &[("target 0", "a"), ("target 1", "b"), ("button", "submit")]),
            ("click-checkboxes-transfer", "Select 1937 and click Submit.", &[("target 0", "1937"), ("button", "submit")]),
            (
                "click-checkboxes-soft",
                "Select words similar to furious, petite and click Submit.",
                &[("target 0", "furious"), ("target 1", "petite"), ("button", "submit")],
            ),
            ("enter-text-dynamic", "Enter \"qRBcu\" into the text field and press Submit.", &[("target", "qRBcu")]),
            ("enter-password", "Enter the password \"u6Rzw\" into both text fields and press submit.", &[("target", "u6Rzw")]),
            ("choose-list", "Select Bosnia and Herzegovina from the list and click Submit.", &[("target", "Bosnia and Herzegovina")]),
            ("use-autocomplete", "Enter an item that starts with \"Bur\" and ends with \"Faso\".", &[("start", "Bur"), ("end", "Faso")]),
            ("use-autocomplete", "Enter an item that starts with \"Sur\".", &[("start", "Sur")]),
            ("navigate-tree", "Navigate through the file tree. Find and click on the folder or file named \"Nieves\".", &[("target", "Nieves")]),
            ("choose-date", "Select 03/27/2016 as the date and hit submit.", &[("month", "03"), ("day", "27"), ("year", "2016")]),
            (
                "search-engine",
                "Use the textbox to enter \"Tora\" and press \"Search\", then find and click the 9th search result.",
                &[("query", "Tora"), ("rank", "9")],
            ),
            (
                "search-engine",
                "Use the textbox to enter \"Jess\" and press \"Search\", then find and click the 2nd search result.",
                &[("query", "Jess"), ("rank", "2")],
            ),
            (
                "multi-layouts",
                "Search for paranoid movies directed by David from year 1982.",
                &[("genre", "paranoid"), ("director", "David"), ("year", "1982")],
            ),
            (
                "multi-orderings",
                "Find thriller movies directed by Stein from 1991, then press Submit.",
                &[("genre", "thriller"), ("director", "Stein"), ("year", "1991")],
            ),
            (
                "book-flight",
                "Book the shortest one-way flight from: Prudhoe Bay/Deadhorse, AK to: EUE on 11/08/2016.",
                &[("criterion", "shortest"), ("from", "Prudhoe Bay/Deadhorse, AK"), ("to", "EUE"), ("date", "11/08/2016")],
            ),
            (
                "book-flight",
                "Book the cheapest one-way flight from: La Crosse, WI to: Austin, TX on 10/21/2016.",
                &[("criterion", "cheapest"), ("from", "La Crosse, WI"), ("to", "Austin, TX"), ("date", "10/21/2016")],
            ),
        ];
        for (task, utterance, want) in cases {
            assert_eq!(fields(task, utterance), kv(want), "{task}: {utterance}");
        }
    }

    #[test]
    fn every_task_with_an_oracle_has_a_pattern_but_the_free_phrasing_one() {
        for t in super::super::builtin_tasks() {
            if crate::policy::oracle::has_script(&t.name) {
                assert_eq!(has_extractor(&t.name), t.name != "email-inbox-nl", "{}", t.name);
            }
        }
    }

    #[test]
    fn miniwob_variants_share_their_tasks_patterns() {
        assert_eq!(fields("click-tab-2-hard", "Switch between the tabs to find and click on the link \"fauna\"."), kv(&[("target", "fauna")]));
        assert_eq!(
            fields("email-inbox-important", "Find the email by Stefa and click the star icon to mark it as important."),
            kv(&[("by", "Stefa"), ("task", "star")])
        );
        assert_eq!(
            fields("login-user-popup", "Enter the username \"a\" and the password \"b\" into the text fields and press login."),
            kv(&[("username", "a"), ("password", "b")])
        );
        assert_eq!(
            fields("choose-date-nodelay", "Select 12/07/2016 as the date and hit submit."),
            kv(&[("month", "12"), ("day", "07"), ("year", "2016")])
        );
    }

    /// Twelve named boxes: one key per box, sorted as strings (MiniWoB++ and WGE sort the keys
    /// too: `target 10` before `target 2`), each holding the box named at its index.
    #[test]
    fn twelve_checkboxes_are_twelve_fields_and_a_button() {
        let names: Vec<String> = (0..12).map(|i| format!("b{i}")).collect();
        let said = format!("Select {} and click Submit.", names.join(", "));
        let got = extract_fields("click-checkboxes-large", &said).unwrap();
        let keys: Vec<&str> = got.iter().map(|f| f.key.as_str()).collect();
        assert_eq!(keys[..5], ["button", "target 0", "target 1", "target 10", "target 11"]);
        assert_eq!(got.len(), 13);
        for (i, name) in names.iter().enumerate() {
            assert_eq!(got.iter().find(|f| f.key == format!("target {i}")).map(|f| f.value.as_str()), Some(name.as_str()));
        }
        // The lab's page gives the same goal as one list; in MiniWoB++'s layout it reads the same.
        let lab = [Field { key: "targets".into(), value: names.join(", ") }];
        assert_eq!(miniwob_layout("click-checkboxes-large", &lab), got);
        let other = [Field { key: "target".into(), value: "OK".into() }];
        assert_eq!(miniwob_layout("click-button", &other), other);
    }

    #[test]
    fn wrong_wording_or_unknown_tasks_give_none() {
        assert_eq!(extract_fields("click-button", "Press the OK button."), None);
        assert_eq!(extract_fields("click-button", "Click on the \"OK\" button. Now."), None, "the whole utterance must match");
        assert_eq!(extract_fields("email-inbox-nl", "Please forward Ann's mail to Bo."), None);
        assert_eq!(extract_fields("no-such-task", "Click the button."), None);
        assert_eq!(extract_fields("choose-date", "Select soon as the date and hit submit."), None, "no date, no fields");
        assert_eq!(
            extract_fields("search-engine", "Use the textbox to enter \"a\" and press \"Search\", then find and click the last search result."),
            None
        );
    }

    #[test]
    fn holes_take_the_longest_text_that_lets_the_rest_match() {
        // Quotes and the template's own words inside a value.
        assert_eq!(fields("enter-text", "Enter \"say \"hi\"\" into the text field and press Submit."), kv(&[("target", "say \"hi\"")]));
        assert_eq!(
            fields("choose-list", "Select Select x from the list from the list and click Submit."),
            kv(&[("target", "Select x from the list")])
        );
        // Whitespace as a page lays it out.
        assert_eq!(fields("click-tab", "  Click on\n Tab  #2. "), kv(&[("target", "2")]));
    }
}
