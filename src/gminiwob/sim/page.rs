//! The simulator's page: the runtime of `tasks/gminiwob.html` (visited marks, ending, next
//! pages, submit), focus and activation as the browser does them, and the actuator's actions.

use super::reader::{collapse, descendants, input_type, text_content};
use super::{Outcome, SiteSim};
use crate::env::{Action, CLICKED_INPUT_TYPES, EnvError};
use crate::gminiwob::reward::field_correct;
use crate::gminiwob::site::Element;

impl SiteSim {
    fn running(&self) -> bool {
        !self.outcome.done
    }

    /// `core.endEpisode`: only the first end of an episode counts.
    pub(super) fn end(&mut self, raw: f64, reason: Option<String>) {
        if self.outcome.done {
            return;
        }
        self.outcome = Outcome { done: true, raw, reason };
        self.guard.finish();
    }

    /// The page's click/input/change listener: the field around the target is visited.
    fn mark_visited(&mut self, i: usize) {
        if !self.running() {
            return;
        }
        if let Some(f) = self.closest(i, "data-field") {
            self.state[f].visited = true;
        }
    }

    fn closest(&self, mut i: usize, attr: &str) -> Option<usize> {
        loop {
            if self.el(i).has_attr(attr) {
                return Some(i);
            }
            i = self.el(i).parent?;
        }
    }

    /// A click event reaching the page: the tamper mark, the visited mark, then the area's
    /// handler (links prevented; end, next page, submit).
    fn dispatch_click(&mut self, i: usize) {
        self.state[i].tampered = true;
        self.mark_visited(i);
        if !self.running() {
            return;
        }
        if let Some(e) = self.closest(i, "data-end") {
            let what = self.el(e).attr_value("data-end").unwrap_or("").to_string();
            self.end(-1.0, Some(format!("clicked the {what}")));
            return;
        }
        if let Some(n) = self.closest(i, "data-next") {
            let target: Option<u32> = self.el(n).attr_value("data-next").and_then(|v| v.trim().parse().ok());
            if let Some(t) = target.filter(|&t| t < self.site.pages) {
                self.page = t;
            }
            return;
        }
        if self.closest(i, "data-submit").is_some() {
            self.submit();
        }
    }

    pub(super) fn submit(&mut self) {
        let wrong: Vec<&str> = self.site.fields.iter().filter(|f| !field_correct(f, |id| self.field_state(id))).map(|f| f.key.as_str()).collect();
        if wrong.is_empty() {
            self.end(1.0, None);
        } else {
            let reason = format!("wrong or missing: {}", wrong.join(", "));
            self.end(-1.0, Some(reason));
        }
    }

    // ------------------------------------------------------------------ focus and activation

    pub(super) fn focusable(&self, i: usize) -> bool {
        let el = self.el(i);
        if el.has_attr("disabled") {
            return false;
        }
        match el.tag {
            "input" => input_type(el) != "hidden",
            "select" | "button" => true,
            "a" => el.has_attr("href"),
            _ => el.has_attr("tabindex"),
        }
    }

    /// `focus()`: moves focus when the element can take it (a label passes it to its control);
    /// a text field also takes the document's selection. Returns whether the element itself has
    /// focus now.
    fn try_focus(&mut self, i: usize) -> bool {
        if self.focus == Some(i) {
            return true;
        }
        if !self.focusable(i) {
            if self.el(i).tag == "label"
                && let Some(c) = self.control(i)
            {
                self.try_focus(c);
            }
            return false;
        }
        if !self.rendered(i) {
            return false;
        }
        self.focus = Some(i);
        if is_text_field(self.el(i)) {
            self.selection = Some(i);
        }
        true
    }

    /// A press: each element from the target up is asked to take focus until one has it; with
    /// none, focus leaves whatever had it.
    fn press(&mut self, i: usize) {
        let mut cur = Some(i);
        while let Some(e) = cur {
            if self.try_focus(e) {
                return;
            }
            cur = self.el(e).parent;
        }
        self.focus = None;
    }

    pub(super) fn click(&mut self, i: usize) {
        self.press(i);
        self.activate(i);
    }

    /// `HTMLElement.click()`: the click event with the element's activation behaviour.
    fn activate(&mut self, i: usize) {
        let el = self.el(i);
        let kind = if el.tag == "input" { input_type(el) } else { "" };
        let changed = match kind {
            "checkbox" => {
                self.state[i].checked = !self.state[i].checked;
                true
            }
            "radio" => {
                let was = self.state[i].checked;
                for r in self.radio_group(i) {
                    self.state[r].checked = false;
                }
                self.state[i].checked = true;
                !was
            }
            _ => false,
        };
        self.dispatch_click(i);
        if changed {
            // input and change.
            self.mark_visited(i);
        }
        if self.el(i).tag == "label"
            && let Some(c) = self.control(i)
        {
            self.try_focus(c);
            self.activate(c);
        }
    }

    /// The control a label labels (its `for` element, if labelable).
    pub(super) fn control(&self, label: usize) -> Option<usize> {
        let &c = self.by_id.get(self.el(label).attr_value("for")?)?;
        matches!(self.el(c).tag, "input" | "select" | "button").then_some(c)
    }

    /// The radios of `i`'s group: same name within the same form (or the whole site).
    pub(super) fn radio_group(&self, i: usize) -> Vec<usize> {
        let name = self.el(i).attr_value("name").unwrap_or("");
        if name.is_empty() {
            return vec![i];
        }
        let mut scope = 0;
        let mut cur = self.el(i).parent;
        while let Some(p) = cur {
            if self.el(p).tag == "form" {
                scope = p;
                break;
            }
            cur = self.el(p).parent;
        }
        descendants(&self.site.tree, scope).filter(|&d| is_radio(self.el(d)) && self.el(d).attr_value("name") == Some(name)).collect()
    }

    // ------------------------------------------------------------------ the actions

    /// `execCommand('insertText')`: the text goes into the field holding the document's
    /// selection (at its end, where the caret always is here), which takes focus; a selection in
    /// a field that stopped being shown is gone. Returns whether the command ran.
    fn insert_text(&mut self, text: &str) -> bool {
        let Some(f) = self.selection else { return false };
        if !self.rendered(f) {
            self.selection = None;
            return false;
        }
        // An input's line breaks become spaces as they are inserted.
        let text = text.replace("\r\n", " ").replace(['\r', '\n'], " ");
        if text.is_empty() {
            return true;
        }
        self.try_focus(f);
        self.state[f].value.push_str(&text);
        self.mark_visited(f);
        true
    }

    /// Sets an input's value from script: a text field drops line breaks.
    fn set_value(&mut self, i: usize, value: &str) {
        let v = if is_text_field(self.el(i)) { value.replace(['\r', '\n'], "") } else { value.to_string() };
        self.state[i].value = v;
    }

    pub(super) fn type_text(&mut self, i: usize, text: &str) {
        self.try_focus(i);
        let el = self.el(i);
        let before = (el.tag == "input").then(|| self.state[i].value.clone());
        // A field that could not take focus is not typed into through another one.
        let inserted = if before.is_some() && self.focus != Some(i) { false } else { self.insert_text(text) };
        if let Some(before) = before
            && (!inserted || self.state[i].value == before)
            && !text.is_empty()
        {
            self.set_value(i, &format!("{before}{text}"));
            self.mark_visited(i);
        }
    }

    pub(super) fn select(&mut self, i: usize, option: &str, action: &Action) -> Result<(), EnvError> {
        let el = self.el(i);
        let what = || format!("select \"{option}\" in #{}", action.target().unwrap_or_default());
        if el.tag != "select" {
            return Err(EnvError::BadTarget { action: what(), detail: format!("it is a {}, not a <select>", el.tag.to_ascii_uppercase()) });
        }
        let Some(k) = self.option_index(i, option) else {
            return Err(EnvError::BadTarget { action: what(), detail: "the list has no such option".into() });
        };
        self.try_focus(i);
        self.state[i].selected = k;
        self.mark_visited(i);
        Ok(())
    }

    fn option_index(&self, sel: usize, option: &str) -> Option<usize> {
        let wanted = collapse(option);
        self.el(sel)
            .children
            .iter()
            .position(|&o| collapse(&text_content(&self.site.tree, o)) == wanted || self.el(o).attr_value("value") == Some(option))
    }

    pub(super) fn set_field(&mut self, i: usize, value: &str) {
        // A value put into a label goes to the control it labels (a click on the label would
        // toggle it whatever the value says), as the actuator does on the live page.
        if self.el(i).tag == "label"
            && let Some(c) = self.control(i)
        {
            return self.set_field(c, value);
        }
        let el = self.el(i);
        match el.tag {
            "input" => match input_type(el) {
                "checkbox" => {
                    if self.state[i].checked != truthy(value) {
                        self.click(i);
                    } else {
                        // Already as wanted: touched, not changed.
                        self.try_focus(i);
                        self.mark_visited(i);
                    }
                }
                "radio" => {
                    let group = self.radio_group(i);
                    self.choose_radio(&group, value);
                }
                ty if CLICKED_INPUT_TYPES.contains(&ty) => self.click(i),
                _ => self.replace_text(i, value),
            },
            "select" => {
                if let Some(k) = self.option_index(i, value) {
                    self.try_focus(i);
                    self.state[i].selected = k;
                    self.mark_visited(i);
                }
            }
            _ => {
                let radios: Vec<usize> = descendants(&self.site.tree, i).filter(|&d| is_radio(self.el(d))).collect();
                if radios.is_empty() {
                    self.click(i);
                } else {
                    self.choose_radio(&radios, value);
                }
            }
        }
    }

    /// Clicks the first radio whose value or label is `value`; none matching changes nothing.
    fn choose_radio(&mut self, radios: &[usize], value: &str) {
        let wanted = collapse(value);
        let label_of = |r: usize| -> String {
            let id = &self.el(r).id;
            if id.is_empty() {
                return String::new();
            }
            self.site
                .tree
                .elements
                .iter()
                .enumerate()
                .find(|(_, e)| e.tag == "label" && e.attr_value("for") == Some(id.as_str()))
                .map(|(l, _)| collapse(&text_content(&self.site.tree, l)))
                .unwrap_or_default()
        };
        if let Some(&r) = radios.iter().find(|&&r| self.state[r].value == value || label_of(r) == wanted) {
            self.click(r);
        }
    }

    /// Replaces a text field's value as a person does (select all, type over it).
    fn replace_text(&mut self, i: usize, value: &str) {
        self.try_focus(i);
        if self.focus == Some(i) {
            self.selection = Some(i);
            self.state[i].value = value.replace("\r\n", " ").replace(['\r', '\n'], " ");
        }
        if self.state[i].value != value {
            self.set_value(i, value);
        }
        // input (when anything changed) and change: the field is visited either way.
        self.mark_visited(i);
    }
}

pub(super) fn is_radio(el: &Element) -> bool {
    el.tag == "input" && input_type(el) == "radio"
}

/// Single-line text inputs: fields with an editor of their own, where the document's selection
/// can be. (The renderer makes no textareas, whose line breaks would need rules of their own.)
fn is_text_field(el: &Element) -> bool {
    el.tag == "input" && matches!(input_type(el), "text" | "password" | "search" | "email" | "tel" | "url")
}

fn truthy(value: &str) -> bool {
    matches!(value.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "on" | "checked")
}
