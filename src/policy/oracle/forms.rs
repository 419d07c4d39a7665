//! Scripts for click-option, the click-checkboxes family, enter-text-dynamic, enter-password, choose-list, use-autocomplete, navigate-tree.

use super::{Entry, button, by_id, click, fill, find};
use crate::env::{Action, DomNode, Observation};

pub(super) const SCRIPTS: &[Entry] = &[
    ("click-option", click_option, click_option_wrong),
    ("click-checkboxes", click_checkboxes, click_checkboxes_wrong),
    ("click-checkboxes-large", click_checkboxes, click_checkboxes_wrong),
    ("click-checkboxes-soft", click_checkboxes_soft, click_checkboxes_soft_wrong),
    ("click-checkboxes-transfer", click_checkboxes, click_checkboxes_wrong),
    ("enter-text-dynamic", enter_text_dynamic, enter_text_dynamic_wrong),
    ("enter-password", enter_password, enter_password_wrong),
    ("choose-list", choose_list, choose_list_wrong),
    ("use-autocomplete", use_autocomplete, use_autocomplete_wrong),
    ("navigate-tree", navigate_tree, navigate_tree_wrong),
];

// ------------------------------------------------------------------------------- helpers

/// Inputs of one type (`INPUT_radio`, `INPUT_checkbox`) with the text of the label around them, in
/// page order. The pages wrap each input and its text in a `<label>`.
fn labelled<'a>(obs: &'a Observation, tag: &str) -> Vec<(&'a DomNode, String)> {
    obs.dom.nodes.iter().filter(|n| n.tag == tag).map(|n| (n, n.parent.map(|p| obs.dom.subtree_text(p)).unwrap_or_default())).collect()
}

/// The comma-separated list in a field (empty entries dropped).
fn list(field: &str) -> Vec<&str> {
    field.split(',').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// The boxes a click-checkboxes goal names: the lab's pages give one `targets` list, MiniWoB++'s
/// field extractor (`env::fields`, on the real pages) one `target i` per box beside `button`.
fn checkbox_targets(obs: &Observation) -> Option<Vec<&str>> {
    let ins = &obs.instruction;
    if let Some(list_field) = ins.field("targets") {
        return Some(list(list_field));
    }
    let mut numbered: Vec<(usize, &str)> =
        ins.fields.iter().filter_map(|f| Some((f.key.strip_prefix("target ")?.parse().ok()?, f.value.as_str()))).collect();
    if numbered.is_empty() && ins.field("button").is_none() {
        return None;
    }
    numbered.sort();
    Some(numbered.into_iter().map(|(_, v)| v).collect())
}

/// Clicks the first checkbox whose state differs from `want(label)`; with none left, Submit.
fn settle_checkboxes(obs: &Observation, want: impl Fn(&str) -> bool) -> Option<Action> {
    let boxes = labelled(obs, "INPUT_checkbox");
    if boxes.is_empty() {
        return None;
    }
    match boxes.iter().find(|(n, label)| n.value.is_checked() != want(label)) {
        Some((n, _)) => Some(click(n)),
        None => button(obs, "Submit").map(click),
    }
}

// ------------------------------------------------------------------------------- click-option

fn choose_radio(obs: &Observation, pick: impl Fn(&str) -> bool) -> Option<Action> {
    let radios = labelled(obs, "INPUT_radio");
    let (radio, _) = radios.iter().find(|(_, label)| pick(label))?;
    if radio.value.is_checked() { button(obs, "Submit").map(click) } else { Some(click(radio)) }
}

fn click_option(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    choose_radio(obs, |label| label == target)
}

fn click_option_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    choose_radio(obs, |label| label != target)
}

// ------------------------------------------------------------------------------- click-checkboxes family

fn click_checkboxes(obs: &Observation) -> Option<Action> {
    let targets = checkbox_targets(obs)?;
    settle_checkboxes(obs, |label| targets.contains(&label))
}

/// Ticks exactly the boxes it should not, then submits. (MiniWoB++'s pages give partial credit,
/// (right - wrong) / boxes, so a selection with one box wrong still wins there.)
fn click_checkboxes_wrong(obs: &Observation) -> Option<Action> {
    let targets = checkbox_targets(obs)?;
    settle_checkboxes(obs, |label| !targets.contains(&label))
}

/// The oracle's thesaurus for click-checkboxes-soft: groups of words of one meaning, covering the
/// words the lab's page and MiniWoB++'s page draw from. Each page's own groups must each lie in
/// one group here, no two in the same one: `thesaurus_covers_the_labs_page` checks the lab's page
/// here, `tests/web_miniwob_real.rs` MiniWoB++'s.
const THESAURUS: &[&[&str]] = &[
    &["big", "large", "huge", "enormous", "gigantic"],
    &["small", "tiny", "little", "miniature", "mini", "petite"],
    &["fast", "quick", "rapid", "speedy"],
    &["slow", "sluggish", "leisurely"],
    &["run", "sprint", "dash"],
    &["walk", "stroll", "amble"],
    &["jump", "leap", "hop"],
    &["happy", "glad", "joyful", "cheerful", "gleeful", "delighted"],
    &["funny", "amusing", "hilarious", "comical", "humorous", "laughable"],
    &["laugh", "giggle", "chuckle"],
    &["sad", "unhappy", "gloomy", "miserable", "sorrowful", "tragic"],
    &["cry", "weep", "sob"],
    &["angry", "furious", "irate", "livid", "mad", "irritated"],
    &["hate", "loathe", "detest", "despise", "dislike"],
    &["fight", "battle", "brawl"],
    &["love", "adore", "cherish", "like", "favor"],
    &["scared", "afraid", "frightened", "fearful", "terrified", "panicked"],
    &["brave", "bold", "fearless", "courageous"],
    &["smart", "clever", "intelligent", "brilliant"],
    &["idea", "notion", "thought", "concept"],
    &["rich", "wealthy", "affluent", "prosperous"],
    &["poor", "needy", "impoverished", "penniless"],
    &["money", "cash", "funds", "currency"],
    &["buy", "purchase"],
    &["begin", "start", "commence", "initiate", "launch"],
    &["finish", "conclude", "complete", "stop", "cease", "halt", "end"],
    &["shout", "yell", "scream", "holler"],
    &["loud", "noisy", "deafening"],
    &["quiet", "silent", "hushed", "soundless", "calm", "peaceful", "serene", "mild"],
    &["talk", "speak", "converse", "chat"],
    &["house", "home", "dwelling", "residence", "houses", "homes"],
    &["road", "street", "avenue"],
    &["car", "automobile", "auto", "cars", "automobiles", "vehicle", "vehicles"],
    &["boat", "ship", "vessel"],
    &["trip", "journey", "voyage"],
    &["cold", "chilly", "freezing", "icy"],
    &["hot", "scorching", "boiling", "sweltering"],
    &["wet", "damp", "moist", "soggy"],
    &["dry", "arid", "parched"],
    &["easy", "simple", "effortless"],
    &["difficult", "hard", "tough", "challenging"],
    &["pretty", "beautiful", "lovely", "gorgeous"],
    &["ugly", "hideous", "unsightly"],
    &["old", "ancient", "aged", "antique", "archaic"],
    &["new", "recent", "modern"],
    &["help", "assist", "aid", "support"],
    &["fix", "repair", "mend"],
    &["break", "smash", "shatter"],
    &["throw", "toss", "hurl", "fling"],
    &["grab", "seize", "grasp", "clutch"],
    &["gather", "collect", "assemble"],
    &["sick", "ill", "unwell", "ailing"],
    &["tired", "weary", "exhausted", "fatigued"],
    &["sleep", "slumber", "doze", "nap"],
    &["doctor", "physician", "medic"],
    &["mistake", "error", "blunder", "fault"],
    &["answer", "reply", "response"],
    &["hide", "conceal", "stash", "camouflage"],
    &["eat", "consume", "devour"],
    &["hungry", "starving", "famished"],
    &["child", "kid", "youngster"],
    &["friend", "pal", "buddy", "companion"],
    &["story", "tale", "narrative"],
    &["picture", "image", "photo"],
    &["rule", "law", "regulation"],
    &["center", "middle", "core"],
    &["edge", "border", "rim"],
    &["top", "peak", "summit"],
    &["dirty", "filthy", "grimy"],
    &["clean", "spotless", "pristine"],
    &["garbage", "trash", "rubbish", "junk"],
    &["strange", "weird", "odd", "bizarre", "peculiar", "unusual"],
    &["smell", "odor", "scent", "aroma"],
    &["forest", "woods", "woodland"],
    &["ocean", "sea"],
    &["thin", "slim", "slender", "skinny"],
    &["red", "scarlet", "crimson", "vermillion"],
    &["evil", "wicked", "immoral", "sinful", "corrupt", "depraved"],
    &["wrong", "incorrect", "mistaken", "erroneous"],
    &["real", "genuine", "actual"],
    &["kill", "murder", "assassinate"],
    &["keep", "retain", "preserve", "sustain", "maintain"],
    &["fat", "fleshy", "plump", "chubby"],
    &["stupid", "dumb", "dull", "unwise"],
    &["delicious", "savory", "delectable", "appetizing"],
    &["cut", "slice", "carve", "chop"],
    &["television", "televisions", "tv", "tvs"],
    &["fire", "flame", "fires", "flames"],
    &["pig", "pork", "swine"],
    &["rabbit", "rabbits", "bunny", "bunnies"],
    &["water"],
];

/// The thesaurus group of a word (case aside), if the oracle knows it.
fn synonym_group(word: &str) -> Option<usize> {
    let w = word.trim().to_lowercase();
    THESAURUS.iter().position(|g| g.contains(&w.as_str()))
}

/// For each box: does its label mean one of the named words? `None` if a word is unknown.
fn soft_wanted(obs: &Observation) -> Option<Vec<(String, bool)>> {
    let named: Vec<usize> = checkbox_targets(obs)?.into_iter().map(synonym_group).collect::<Option<_>>()?;
    labelled(obs, "INPUT_checkbox").into_iter().map(|(_, label)| synonym_group(&label).map(|g| (label, named.contains(&g)))).collect()
}

/// Each of `groups` lies in one thesaurus group, and no two in the same one: then the oracle
/// tells exactly the page's synonyms apart.
pub fn thesaurus_covers(groups: &[Vec<String>]) -> Result<(), String> {
    let mut seen = Vec::new();
    for g in groups {
        let ids: Vec<Option<usize>> = g.iter().map(|w| synonym_group(w)).collect();
        let Some(Some(id)) = ids.first().copied() else { return Err(format!("{g:?}: unknown word")) };
        if ids.iter().any(|i| *i != Some(id)) {
            return Err(format!("{g:?} spans several groups of the thesaurus"));
        }
        if seen.contains(&id) {
            return Err(format!("{g:?} shares its thesaurus group with another group of the page"));
        }
        seen.push(id);
    }
    Ok(())
}

fn click_checkboxes_soft(obs: &Observation) -> Option<Action> {
    let wanted = soft_wanted(obs)?;
    settle_checkboxes(obs, |label| wanted.iter().any(|(l, w)| l == label && *w))
}

/// As [`click_checkboxes_wrong`]: exactly the boxes of other meanings.
fn click_checkboxes_soft_wrong(obs: &Observation) -> Option<Action> {
    let wanted = soft_wanted(obs)?;
    settle_checkboxes(obs, |label| !wanted.iter().any(|(l, w)| l == label && *w))
}

// ------------------------------------------------------------------------------- text entry

fn enter_text_dynamic(obs: &Observation) -> Option<Action> {
    let input = find(obs, |n| n.tag == "INPUT_text")?;
    fill(input, obs.instruction.field("target")?).or_else(|| button(obs, "Submit").map(click))
}

/// Types the word without its last character (the words have at least two) and submits.
fn enter_text_dynamic_wrong(obs: &Observation) -> Option<Action> {
    let input = find(obs, |n| n.tag == "INPUT_text")?;
    let target = obs.instruction.field("target")?;
    let short: String = target.chars().take(target.chars().count().saturating_sub(1)).collect();
    fill(input, &short).or_else(|| button(obs, "Submit").map(click))
}

fn enter_password(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    fill(by_id(obs, "password")?, target).or_else(|| fill(by_id(obs, "verify")?, target)).or_else(|| button(obs, "Submit").map(click))
}

/// A typo in the confirmation field.
fn enter_password_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    fill(by_id(obs, "password")?, target).or_else(|| fill(by_id(obs, "verify")?, &format!("{target}1"))).or_else(|| button(obs, "Submit").map(click))
}

// ------------------------------------------------------------------------------- choose-list

fn select_then_submit(obs: &Observation, option: &str) -> Option<Action> {
    let select = find(obs, |n| n.tag == "SELECT")?;
    if select.text != option { Some(Action::Select(select.r#ref, option.to_string())) } else { button(obs, "Submit").map(click) }
}

fn choose_list(obs: &Observation) -> Option<Action> {
    select_then_submit(obs, obs.instruction.field("target")?)
}

fn choose_list_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    let select = find(obs, |n| n.tag == "SELECT")?;
    let other = select.options.iter().find(|o| *o != target)?;
    select_then_submit(obs, other)
}

// ------------------------------------------------------------------------------- use-autocomplete

fn fits(item: &str, start: &str, end: &str) -> bool {
    let (i, s, e) = (item.to_lowercase(), start.to_lowercase(), end.to_lowercase());
    i.starts_with(&s) && i.ends_with(&e) && i.chars().count() > s.chars().count()
}

/// The field to type into: the lab's `#ac-input`, or the page's one text field (MiniWoB++'s
/// jQuery UI autocomplete).
fn autocomplete_input(obs: &Observation) -> Option<&DomNode> {
    by_id(obs, "ac-input").or_else(|| find(obs, |n| n.tag == "INPUT_text"))
}

/// A suggestion: the lab's `.ac-item`, or an item of jQuery UI's menu.
fn is_suggestion(n: &DomNode) -> bool {
    n.has_class("ac-item") || n.has_class("ui-menu-item-wrapper")
}

/// Type the start, click the suggestion that fits, submit.
fn use_autocomplete(obs: &Observation) -> Option<Action> {
    let start = obs.instruction.field("start")?;
    let end = obs.instruction.field("end").unwrap_or("");
    let input = autocomplete_input(obs)?;
    let value = input.value.as_text().unwrap_or("");
    if value.is_empty() {
        return Some(Action::Type(input.r#ref, start.to_string()));
    }
    if let Some(s) = find(obs, |n| is_suggestion(n) && n.text != value && fits(&n.text, start, end)) {
        return Some(click(s));
    }
    button(obs, "Submit").map(click)
}

/// Types the start and submits it as it is, without completing the name.
fn use_autocomplete_wrong(obs: &Observation) -> Option<Action> {
    let start = obs.instruction.field("start")?;
    let input = autocomplete_input(obs)?;
    fill(input, start).or_else(|| button(obs, "Submit").map(click))
}

// ------------------------------------------------------------------------------- navigate-tree

/// The arrow of the first closed folder in view: the lab's `.toggle`, or the hit area jQuery's
/// treeview puts before a closed folder (MiniWoB++'s page).
fn closed_folder_toggle(obs: &Observation) -> Option<&DomNode> {
    find(obs, |n| (n.has_class("toggle") && n.parent.is_some_and(|p| obs.dom.nodes[p].has_class("collapsed"))) || n.has_class("expandable-hitarea"))
}

/// A file's or folder's name: the lab's `.name`, or treeview's `span.file` / `span.folder`.
fn is_entry_name(n: &DomNode) -> bool {
    n.has_class("name") || (n.tag == "SPAN" && (n.has_class("file") || n.has_class("folder")))
}

/// Click the target when it is in view; otherwise open a closed folder (only closed folders can
/// hide it).
fn navigate_tree(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    match find(obs, |n| is_entry_name(n) && n.text == target) {
        Some(n) => Some(click(n)),
        None => closed_folder_toggle(obs).map(click),
    }
}

/// Clicks a file that is not the target (the page fails that), opening folders until one is in
/// view. Every tree has at least two files, so one that is not the target is always there.
fn navigate_tree_wrong(obs: &Observation) -> Option<Action> {
    let target = obs.instruction.field("target")?;
    let is_file = |n: &DomNode| n.has_class("file") || n.parent.is_some_and(|p| obs.dom.nodes[p].has_class("file"));
    match find(obs, |n| is_entry_name(n) && n.text != target && is_file(n)) {
        Some(n) => Some(click(n)),
        None => closed_folder_toggle(obs).map(click),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::task::embedded_files;

    /// The page's groups, each without its leading family tag.
    fn page_groups() -> Vec<Vec<String>> {
        let html = embedded_files().iter().find(|(p, _)| *p == "click-checkboxes-soft.html").expect("page").1;
        let start = html.find("var GROUPS = [").expect("GROUPS in the page");
        let body = &html[start..start + html[start..].find("];").expect("end of GROUPS")];
        body.lines()
            .filter(|l| l.trim_start().starts_with("['"))
            .map(|l| l.split('\'').skip(1).step_by(2).skip(1).map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn thesaurus_covers_the_labs_page() {
        let page = page_groups();
        assert!(page.len() > 40, "parsed only {} groups", page.len());
        thesaurus_covers(&page).unwrap();
        let mut all: Vec<&str> = THESAURUS.iter().flat_map(|g| g.iter().copied()).collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n, "a word sits in two groups");
        assert!(all.iter().all(|w| *w == w.to_lowercase()), "words are kept in lower case");
        // Two groups of the page in one of the thesaurus would make the oracle tick both.
        assert!(thesaurus_covers(&[vec!["big".into()], vec!["huge".into()]]).is_err());
    }

    #[test]
    fn autocomplete_fit_needs_more_than_the_start() {
        assert!(fits("Cambodia", "Cam", "a"));
        assert!(!fits("Cameroon", "Cam", "a"));
        assert!(!fits("Cam", "Cam", ""));
        assert!(fits("Russia", "rus", ""));
        assert_eq!(list(" a, b ,,c "), ["a", "b", "c"]);
        assert!(list("").is_empty());
    }

    /// The lab's `targets` list and MiniWoB++'s `target i` fields (as `env::fields` reads a real
    /// page's utterance) name the same boxes, in order; no named box is not no goal.
    #[test]
    fn both_field_shapes_name_the_same_boxes() {
        use crate::env::Instruction;
        let said = "Select b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11 and click Submit.";
        let lab = Observation {
            instruction: Instruction::for_task(
                "click-checkboxes-large",
                said,
                vec![crate::env::Field { key: "targets".into(), value: said[7..said.len() - 18].into() }],
            ),
            ..Default::default()
        };
        let real = Observation { instruction: Instruction::for_task("click-checkboxes-large", said, vec![]), ..Default::default() };
        assert!(real.instruction.field("targets").is_none() && real.instruction.field("target 11") == Some("b11"));
        let want: Vec<String> = (0..12).map(|i| format!("b{i}")).collect();
        assert_eq!(checkbox_targets(&lab).unwrap(), want);
        assert_eq!(checkbox_targets(&real).unwrap(), want);
        let nothing =
            Observation { instruction: Instruction::for_task("click-checkboxes", "Select nothing and click Submit.", vec![]), ..Default::default() };
        assert_eq!(checkbox_targets(&nothing), Some(vec![]));
        assert_eq!(checkbox_targets(&Observation::default()), None);
    }
}
