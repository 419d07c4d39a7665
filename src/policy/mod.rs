//! Policies that need no learning: the random baseline and the scripted oracles.

pub mod gminiwob;
pub mod oracle;

use crate::env::action::SCROLL_STEP;
use crate::env::key::DEFAULT_ALLOWED_KEYS;
use crate::env::miniwob::Interaction;
use crate::env::{Action, Observation, Point};
use crate::rng::Rng;
use crate::task::TaskSpec;

/// Chooses the next action from an observation; `None` means it has nothing to do.
pub trait Policy {
    fn act(&mut self, obs: &Observation) -> Option<Action>;
    /// Called when a new episode starts, for policies that keep per-episode state.
    fn reset(&mut self) {}
}

/// Uniform over DOM-Q-Net's action space: a random leaf; typed into with a random goal token when
/// it takes text (half the time), a random option when it is a `<select>`, clicked otherwise.
///
/// On a real MiniWoB++ page whose input is not clicking and typing (`interaction` in
/// `tasks/miniwob.json`), half its actions are of the kind that page needs, from MiniWoB++'s
/// action space: a click at a random point of the task area (coordinates), the pointer moved
/// there (hover), a drag from a random element or point to another point (drag), the wheel
/// turned by one MiniWoB++ step over a point (scroll), a key of MiniWoB++'s default key set or a
/// goal token typed key by key (free text), a wait of up to a second (timing). The other half
/// are element actions as above, so it still presses the page's buttons.
pub struct RandomPolicy {
    rng: Rng,
    interaction: Interaction,
}

/// The longest a random wait lasts (milliseconds).
const MAX_RANDOM_WAIT_MS: usize = 1_000;

impl RandomPolicy {
    /// Element actions only (the lab's own tasks and the click-and-type pages).
    pub fn new(seed: u64) -> Self {
        RandomPolicy { rng: Rng::new(seed), interaction: Interaction::ClickType }
    }

    /// The action set `task` needs: a real MiniWoB++ page's `interaction`, element actions for
    /// every other task.
    pub fn for_task(seed: u64, task: &TaskSpec) -> Self {
        let interaction = task.miniwob_task().map_or(Interaction::ClickType, |t| t.interaction);
        RandomPolicy { rng: Rng::new(seed), interaction }
    }

    fn element_action(&mut self, obs: &Observation) -> Option<Action> {
        let leaves: Vec<_> = obs.dom.leaves().collect();
        let leaf = *self.rng.choose(&leaves)?;
        if leaf.tag == "SELECT" && !leaf.options.is_empty() {
            let opt = self.rng.choose(&leaf.options)?;
            return Some(Action::Select(leaf.r#ref, opt.clone()));
        }
        if leaf.accepts_text() && !obs.instruction.tokens.is_empty() && self.rng.below(2) == 0 {
            let tok = self.rng.choose(&obs.instruction.tokens)?;
            return Some(Action::Type(leaf.r#ref, tok.clone()));
        }
        Some(Action::Click(leaf.r#ref))
    }

    /// The task area (`#area`, or the whole page where it has none), within the page's root box:
    /// an area taller than its page (drag-cube, drag-shapes-2) would give points the environment
    /// refuses as outside the page.
    fn area(obs: &Observation) -> Option<crate::env::Rect> {
        let root = obs.dom.nodes.first()?.rect;
        let a = obs.dom.nodes.iter().find(|n| n.id == "area").map_or(root, |n| n.rect);
        let (left, top) = (a.left.max(root.left), a.top.max(root.top));
        let right = (a.left + a.width).min(root.left + root.width);
        let bottom = (a.top + a.height).min(root.top + root.height);
        (right > left && bottom > top).then_some(crate::env::Rect { left, top, width: right - left, height: bottom - top })
    }

    /// A uniform point of the task area.
    fn point(&mut self, obs: &Observation) -> Option<Point> {
        let r = Self::area(obs)?;
        let (w, h) = (r.width.max(1.0), r.height.max(1.0));
        let x = r.left + (self.rng.next_f64() as f32) * w;
        let y = r.top + (self.rng.next_f64() as f32) * h;
        Some((x as i32, y as i32))
    }

    /// The centre of a random element leaf inside the task area (a drag most often starts on
    /// something; a leaf scrolled out of the area, as on daily-calendar, is not one to press).
    fn element_point(&mut self, obs: &Observation) -> Option<Point> {
        let area = Self::area(obs)?;
        let centre = |r: &crate::env::Rect| (r.left + r.width / 2.0, r.top + r.height / 2.0);
        let inside = |(x, y): (f32, f32)| x >= area.left && x < area.left + area.width && y >= area.top && y < area.top + area.height;
        let leaves: Vec<_> = obs.dom.leaves().filter(|n| !n.is_text() && n.rect.width > 0.0 && inside(centre(&n.rect))).collect();
        let (x, y) = centre(&self.rng.choose(&leaves)?.rect);
        Some((x as i32, y as i32))
    }

    fn needed_action(&mut self, obs: &Observation) -> Option<Action> {
        Some(match self.interaction {
            Interaction::ClickType => return self.element_action(obs),
            Interaction::Coordinates => {
                let (x, y) = self.point(obs)?;
                Action::ClickAt(x, y)
            }
            Interaction::Hover => {
                let (x, y) = self.point(obs)?;
                Action::MoveTo(x, y)
            }
            Interaction::Drag => {
                let from = if self.rng.below(2) == 0 { self.element_point(obs) } else { None };
                let from = match from {
                    Some(p) => p,
                    None => self.point(obs)?,
                };
                let to = self.point(obs)?;
                Action::Drag(vec![from, ((from.0 + to.0) / 2, (from.1 + to.1) / 2), to])
            }
            Interaction::Scroll => {
                let (x, y) = self.point(obs)?;
                Action::Scroll(x, y, if self.rng.below(2) == 0 { SCROLL_STEP } else { -SCROLL_STEP })
            }
            Interaction::FreeText => match self.rng.choose(&obs.instruction.tokens) {
                Some(tok) if self.rng.below(2) == 0 => Action::TypeText(tok.clone()),
                _ => Action::PressKey(self.rng.choose(DEFAULT_ALLOWED_KEYS)?.to_string()),
            },
            Interaction::Timing => Action::Wait(self.rng.below(MAX_RANDOM_WAIT_MS + 1) as u32),
        })
    }
}

impl Policy for RandomPolicy {
    fn act(&mut self, obs: &Observation) -> Option<Action> {
        if self.interaction == Interaction::ClickType || self.rng.below(2) == 0 {
            return self.element_action(obs);
        }
        self.needed_action(obs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{DomGraph, DomNode, Instruction, Rect};

    fn page() -> Observation {
        let node = |r: u32, parent: Option<usize>, children: Vec<usize>, tag: &str, id: &str, rect: Rect| DomNode {
            r#ref: r,
            parent,
            children,
            tag: tag.into(),
            id: id.into(),
            rect,
            ..Default::default()
        };
        let area = Rect { left: 0.0, top: 50.0, width: 160.0, height: 160.0 };
        Observation {
            instruction: Instruction::new("Drag the box", Vec::new()),
            dom: DomGraph {
                nodes: vec![
                    node(1, None, vec![1], "BODY", "", Rect { left: 0.0, top: 0.0, width: 500.0, height: 300.0 }),
                    node(2, Some(0), vec![2], "DIV", "area", area),
                    node(3, Some(1), vec![], "BUTTON", "subbtn", Rect { left: 10.0, top: 180.0, width: 40.0, height: 20.0 }),
                ],
                truncated: 0,
            },
            ..Default::default()
        }
    }

    #[test]
    fn points_stay_inside_the_page_where_the_area_is_taller() {
        let mut obs = page();
        obs.dom.nodes[0].rect.height = 180.0; // the page ends 30 px above the area's bottom
        let mut p = RandomPolicy::for_task(3, &TaskSpec::miniwob("drag-cube").unwrap());
        for _ in 0..300 {
            let (_, y) = p.point(&obs).unwrap();
            assert!((50..180).contains(&y), "{y}");
        }
    }

    #[test]
    fn samples_what_the_page_needs_inside_the_task_area() {
        let obs = page();
        let inside = |(x, y): Point| (0..160).contains(&x) && (50..210).contains(&y);
        for (task, kind) in [
            ("drag-box", "drag"),
            ("bisect-angle", "click_at"),
            ("click-menu", "move"),
            ("scroll-text-2", "scroll"),
            ("terminal", "type_text|key"),
            ("simon-says", "wait"),
        ] {
            let mut p = RandomPolicy::for_task(7, &TaskSpec::miniwob(task).unwrap());
            let acts: Vec<Action> = (0..200).map(|_| p.act(&obs).unwrap()).collect();
            let needed: Vec<&Action> = acts.iter().filter(|a| !a.is_element_action()).collect();
            assert!((60..140).contains(&needed.len()), "{task}: about half are its own kind ({})", needed.len());
            for a in &needed {
                let json = serde_json::to_string(a).unwrap();
                assert!(kind.split('|').any(|k| json.starts_with(&format!("{{\"{k}\""))), "{task}: {json}");
                assert!(a.point().is_none_or(inside), "{task}: {json} is outside the task area");
                assert!(a.check().is_ok());
            }
            assert!(acts.contains(&Action::Click(3)), "{task}: it still presses the page's button");
        }
        // The lab's tasks and the click-and-type pages keep the element actions alone.
        for task in [TaskSpec::builtin("click-test").unwrap(), TaskSpec::miniwob("click-button").unwrap()] {
            let mut p = RandomPolicy::for_task(7, &task);
            assert!((0..100).all(|_| p.act(&obs).unwrap().is_element_action()));
        }
    }
}
