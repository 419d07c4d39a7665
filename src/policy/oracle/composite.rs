//! Scripts for choose-date, search-engine, multi-orderings, multi-layouts, book-flight.
//!
//! Each reads the lab's page and the real MiniWoB++ page of its name alike: the calendar is the
//! lab's or jQuery UI's date picker, suggestions the lab's lists or jQuery UI's autocomplete menu,
//! and a form's captions and Submit control are recognised by their wording.

use super::{Entry, button, by_id, click, fill, find};
use crate::env::{Action, DomGraph, DomNode, Observation};

pub(super) const SCRIPTS: &[Entry] = &[
    ("choose-date", choose_date, choose_date_wrong),
    ("search-engine", search_engine, search_engine_wrong),
    ("multi-orderings", movie_form, movie_form_wrong),
    ("multi-layouts", movie_form, movie_form_wrong),
    ("book-flight", book_flight, book_flight_wrong),
];

const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

// ------------------------------------------------------------------------------- tree helpers

/// Indices of the node at `i` and everything under it, in document order.
fn subtree(dom: &DomGraph, i: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![i];
    while let Some(j) = stack.pop() {
        out.push(j);
        stack.extend(dom.nodes[j].children.iter().rev());
    }
    out
}

fn position(obs: &Observation, pred: impl Fn(&DomNode) -> bool) -> Option<usize> {
    obs.dom.nodes.iter().position(pred)
}

fn text_value(n: &DomNode) -> &str {
    n.value.as_text().unwrap_or("")
}

// ------------------------------------------------------------------------------- date picker
// The calendar of choose-date and book-flight: field #datepicker and a popup, the lab's (#cal with
// #cal-title "November 2016", #cal-prev, #cal-next and day links `a.cal-day`) or jQuery UI's
// (`.ui-datepicker-month` and `-year`, `.ui-datepicker-prev` and `-next`, day links in the
// `.ui-datepicker-calendar` table).

/// "MM/DD/YYYY" as (year, month 1-12, day).
fn parse_date(s: &str) -> Option<(i32, u32, u32)> {
    let mut it = s.trim().split('/');
    let m = it.next()?.parse().ok()?;
    let d = it.next()?.parse().ok()?;
    let y = it.next()?.parse().ok()?;
    (it.next().is_none() && (1..=12).contains(&m)).then_some((y, m, d))
}

/// "November 2016" as (year, month 1-12).
fn parse_month_title(s: &str) -> Option<(i32, u32)> {
    let mut it = s.split_whitespace();
    let name = it.next()?;
    let m = MONTHS.iter().position(|&n| n == name)? as u32 + 1;
    Some((it.next()?.parse().ok()?, m))
}

/// The month the open calendar shows, as (year, month 1-12); `None` while it is closed.
fn shown_month(obs: &Observation) -> Option<(i32, u32)> {
    if let Some(t) = by_id(obs, "cal-title") {
        return parse_month_title(&t.text);
    }
    let month = find(obs, |n| n.has_class("ui-datepicker-month"))?;
    let year = find(obs, |n| n.has_class("ui-datepicker-year"))?;
    parse_month_title(&format!("{} {}", month.text, year.text))
}

/// The calendar's button to the previous (`-1`) or next month.
fn month_button(obs: &Observation, dir: i32) -> Option<&DomNode> {
    let (lab, jquery) = if dir < 0 { ("cal-prev", "ui-datepicker-prev") } else { ("cal-next", "ui-datepicker-next") };
    by_id(obs, lab).or_else(|| find(obs, |n| n.has_class(jquery)))
}

/// The link of day `day` in the shown month.
fn day_link<'a>(obs: &'a Observation, day: &str) -> Option<&'a DomNode> {
    let in_jquery_calendar = |n: &DomNode| {
        let cell = n.parent.map(|p| &obs.dom.nodes[p]);
        cell.is_some_and(|c| c.tag == "TD" && !c.has_class("ui-datepicker-unselectable"))
    };
    find(obs, |n| n.tag == "A" && n.text == day && (n.has_class("cal-day") || in_jquery_calendar(n)))
}

/// The next calendar action that brings the date field to `want`; `None` once it holds it.
fn date_step(obs: &Observation, want: &str) -> Option<Action> {
    let input = by_id(obs, "datepicker")?;
    if text_value(input).trim() == want {
        return None;
    }
    let (y, m, d) = parse_date(want)?;
    let Some((vy, vm)) = shown_month(obs) else {
        // The calendar is closed: open it.
        return Some(click(input));
    };
    let (target, shown) = (y * 12 + m as i32, vy * 12 + vm as i32);
    if target != shown {
        return month_button(obs, (target - shown).signum()).map(click);
    }
    day_link(obs, &d.to_string()).map(click)
}

fn instructed_date(obs: &Observation) -> Option<(u32, u32, String)> {
    let f = |k| obs.instruction.field(k);
    Some((f("month")?.parse().ok()?, f("day")?.parse().ok()?, f("year")?.to_string()))
}

// ------------------------------------------------------------------------------- choose-date

fn choose_date(obs: &Observation) -> Option<Action> {
    let (m, d, y) = instructed_date(obs)?;
    date_step(obs, &format!("{m:02}/{d:02}/{y}")).or_else(|| button(obs, "Submit").map(click))
}

/// Picks a neighbouring day of the right month, then submits.
fn choose_date_wrong(obs: &Observation) -> Option<Action> {
    let (m, d, y) = instructed_date(obs)?;
    let other = if d == 1 { 2 } else { d - 1 };
    date_step(obs, &format!("{m:02}/{other:02}/{y}")).or_else(|| button(obs, "Submit").map(click))
}

// ------------------------------------------------------------------------------- search-engine
// Search box #search-text and a Search button; results' titles (the lab's `a.result-title`,
// MiniWoB++'s `a.search-title`), three to a page, with page links `a.page-link` (the shown page's
// link, or its list item, has class `active`).

const RESULTS_PER_PAGE: usize = 3;

fn is_result_title(n: &DomNode) -> bool {
    n.has_class("result-title") || n.has_class("search-title")
}

fn search_and_click(obs: &Observation, rank: usize) -> Option<Action> {
    let query = obs.instruction.field("query")?;
    let input = by_id(obs, "search-text")?;
    if let Some(a) = fill(input, query) {
        return Some(a);
    }
    let results: Vec<&DomNode> = obs.dom.nodes.iter().filter(|n| is_result_title(n)).collect();
    if results.is_empty() {
        return button(obs, "Search").map(click);
    }
    let page = ((rank - 1) / RESULTS_PER_PAGE + 1).to_string();
    let active = |n: &DomNode| n.has_class("active") || n.parent.is_some_and(|p| obs.dom.nodes[p].has_class("active"));
    let shown = find(obs, |n| n.has_class("page-link") && active(n))?;
    if shown.text != page {
        return find(obs, |n| n.has_class("page-link") && n.text == page).map(click);
    }
    results.get((rank - 1) % RESULTS_PER_PAGE).map(|n| click(n))
}

fn search_engine(obs: &Observation) -> Option<Action> {
    let rank: usize = obs.instruction.field("rank")?.parse().ok()?;
    search_and_click(obs, rank.max(1))
}

/// Searches correctly, then clicks the first result (the second when the first is wanted).
fn search_engine_wrong(obs: &Observation) -> Option<Action> {
    let rank: usize = obs.instruction.field("rank")?.parse().ok()?;
    search_and_click(obs, if rank == 1 { 2 } else { 1 })
}

// ------------------------------------------------------------------------------- multi-*
// A form with captions Genre / Director / Year. Each caption sits in a container (label, row,
// table row) with its control: a text field, a drop-down list, or radio buttons labelled with the
// choices. The control of a caption is the one in its smallest enclosing container that has one.

fn is_control(n: &DomNode) -> bool {
    n.tag == "SELECT" || n.tag == "INPUT_radio" || n.accepts_text()
}

/// Whether a caption names the field `key`: "Genre", "Genre:", "Movie Genre", "Director Name";
/// the year is also captioned "Released Date" (MiniWoB++'s multi-layouts).
fn caption_is(text: &str, key: &str) -> bool {
    let text = text.trim().trim_end_matches(':').trim().to_ascii_lowercase();
    let words: Vec<&str> = text.split_whitespace().collect();
    match (key, words.as_slice()) {
        (_, [w]) if *w == key => true,
        ("genre", ["movie", "genre"]) | ("director", ["director", "name"]) | ("year", ["released", "date"]) => true,
        _ => false,
    }
}

/// The form's submit control: a button or a clickable box labelled as one (MiniWoB++'s layouts
/// say "Search" or "Go!", and some draw it as a `div`).
fn submit_control(obs: &Observation) -> Option<&DomNode> {
    const WORDS: [&str; 3] = ["Submit", "Search", "Go!"];
    find(obs, |n| n.tag == "BUTTON" && WORDS.contains(&n.text.as_str()))
        .or_else(|| find(obs, |n| n.tag != crate::env::TEXT_TAG && n.is_leaf() && WORDS.contains(&n.text.as_str())))
}

/// The next action that sets the field captioned `key` to `want`; `None` once it holds it.
fn form_field_step(obs: &Observation, key: &str, want: &str) -> Option<Action> {
    let dom = &obs.dom;
    let cap = position(obs, |n| n.is_leaf() && caption_is(&n.text, key))?;
    let mut up = dom.nodes[cap].parent;
    while let Some(p) = up {
        let controls: Vec<&DomNode> = subtree(dom, p).into_iter().map(|i| &dom.nodes[i]).filter(|n| is_control(n)).collect();
        if let Some(first) = controls.first() {
            return match first.tag.as_str() {
                "SELECT" => (!first.text.trim().eq_ignore_ascii_case(want)).then(|| Action::Select(first.r#ref, want.to_string())),
                "INPUT_radio" => {
                    let radio = controls.iter().find(|r| {
                        let label = dom.index_of(r.r#ref).and_then(|i| dom.nodes[i].parent);
                        label.is_some_and(|l| dom.subtree_text(l).trim().eq_ignore_ascii_case(want))
                    })?;
                    (!radio.value.is_checked()).then(|| click(radio))
                }
                _ => fill(first, want),
            };
        }
        up = dom.nodes[p].parent;
    }
    None
}

fn fill_movie_form(obs: &Observation, director: &str) -> Option<Action> {
    let genre = obs.instruction.field("genre")?;
    let year = obs.instruction.field("year")?;
    form_field_step(obs, "genre", genre)
        .or_else(|| form_field_step(obs, "director", director))
        .or_else(|| form_field_step(obs, "year", year))
        .or_else(|| submit_control(obs).map(click))
}

fn movie_form(obs: &Observation) -> Option<Action> {
    fill_movie_form(obs, obs.instruction.field("director")?)
}

/// Fills everything but misspells the director, then submits.
fn movie_form_wrong(obs: &Observation) -> Option<Action> {
    let wrong = format!("{}x", obs.instruction.field("director")?);
    fill_movie_form(obs, &wrong)
}

// ------------------------------------------------------------------------------- book-flight
// Form: #flight-from / #flight-to with suggestions ("City, ST (CODE)": the lab's lists #from-list
// / #to-list, or jQuery UI's autocomplete menu), the date field with its calendar, a Search
// button. Results: `.flight` cards with a duration (the lab's `.fl-dur`, MiniWoB++'s
// `.time-duration`: "2h 05m" or "45m"), a price (`.fl-price` "$312", `.flight-price` "Book flight
// for $312") and a button to book.

/// Whether an airport label "City, ST (CODE)" is the airport the instruction names by city or code.
fn airport_is(label: &str, named: &str) -> bool {
    let is_code = named.len() == 3 && named.chars().all(|c| c.is_ascii_uppercase());
    if is_code { label.ends_with(&format!("({named})")) } else { label.starts_with(&format!("{named} (")) }
}

/// The next action that makes the airport field `input_id` hold the airport `named`; `None` once
/// it does.
fn airport_step(obs: &Observation, input_id: &str, list_id: &str, named: &str) -> Option<Action> {
    let input = by_id(obs, input_id)?;
    let value = text_value(input).trim();
    if airport_is(value, named) {
        return None;
    }
    if let Some(list) = position(obs, |n| n.id == list_id) {
        let pick = subtree(&obs.dom, list).into_iter().map(|i| &obs.dom.nodes[i]).find(|n| n.tag == "LI" && airport_is(&n.text, named));
        if let Some(li) = pick {
            return Some(click(li));
        }
    }
    // jQuery UI's menu shows only the field being typed in.
    if let Some(item) = find(obs, |n| n.has_class("ui-menu-item-wrapper") && airport_is(&n.text, named)) {
        return Some(click(item));
    }
    // Type the name to get suggestions; with text already there, a click shows them again.
    if value.is_empty() { Some(Action::Type(input.r#ref, named.to_string())) } else { Some(click(input)) }
}

/// "2h 05m" or "45m" as minutes.
fn parse_duration(s: &str) -> Option<u32> {
    s.split_whitespace().try_fold(0, |acc, part| {
        if let Some(h) = part.strip_suffix('h') {
            Some(acc + h.parse::<u32>().ok()? * 60)
        } else {
            Some(acc + part.strip_suffix('m')?.parse::<u32>().ok()?)
        }
    })
}

fn book(obs: &Observation, worst: bool) -> Option<Action> {
    let criterion = obs.instruction.field("criterion")?;
    let dom = &obs.dom;
    let mut choice: Option<(i64, &DomNode)> = None;
    for card in (0..dom.nodes.len()).filter(|&i| dom.nodes[i].has_class("flight")) {
        let nodes: Vec<&DomNode> = subtree(dom, card).into_iter().map(|i| &dom.nodes[i]).collect();
        let text_of = |classes: [&str; 2]| nodes.iter().find(|n| classes.iter().any(|c| n.has_class(c))).map(|n| n.text.trim().to_string());
        let key = if criterion == "cheapest" {
            let price = text_of(["fl-price", "flight-price"])?;
            price.rsplit('$').next()?.trim().parse::<i64>().ok()?
        } else {
            parse_duration(&text_of(["fl-dur", "time-duration"])?)? as i64
        };
        let key = if worst { -key } else { key };
        let book = nodes.iter().find(|n| n.tag == "BUTTON")?;
        if choice.is_none_or(|(k, _)| key < k) {
            choice = Some((key, book));
        }
    }
    choice.map(|(_, b)| click(b))
}

fn search_then_book(obs: &Observation, worst: bool) -> Option<Action> {
    if obs.dom.nodes.iter().any(|n| n.has_class("flight")) {
        return book(obs, worst);
    }
    let f = |k| obs.instruction.field(k);
    airport_step(obs, "flight-from", "from-list", f("from")?)
        .or_else(|| airport_step(obs, "flight-to", "to-list", f("to")?))
        .or_else(|| date_step(obs, f("date")?))
        .or_else(|| button(obs, "Search").map(click))
}

fn book_flight(obs: &Observation) -> Option<Action> {
    search_then_book(obs, false)
}

/// Searches correctly, then books the most expensive (or longest) flight.
fn book_flight_wrong(obs: &Observation) -> Option<Action> {
    search_then_book(obs, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_parsers() {
        assert_eq!(parse_date("03/09/2016"), Some((2016, 3, 9)));
        assert_eq!(parse_date("13/09/2016"), None);
        assert_eq!(parse_month_title("November 2016"), Some((2016, 11)));
        assert_eq!(parse_month_title("Nov 2016"), None);
    }

    #[test]
    fn form_captions() {
        assert!(caption_is("Genre:", "genre") && caption_is(" Year ", "year") && !caption_is("Genres", "genre"));
        assert!(caption_is("Movie Genre", "genre") && caption_is("Director Name", "director"));
        assert!(caption_is("Released Date", "year") && !caption_is("Movie Search", "genre"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2h 05m"), Some(125));
        assert_eq!(parse_duration("45m"), Some(45));
        assert_eq!(parse_duration("45"), None);
    }

    #[test]
    fn airports_by_city_or_code() {
        assert!(airport_is("Portland, OR (PDX)", "Portland, OR"));
        assert!(!airport_is("Portland, ME (PWM)", "Portland, OR"));
        assert!(airport_is("Lexington, KY (LEX)", "LEX"));
        assert!(!airport_is("Lexington, KY (LEX)", "Lexington"));
        assert!(!airport_is("LEX", "LEX"));
    }
}
