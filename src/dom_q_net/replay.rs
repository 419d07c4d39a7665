//! Prioritized replay (Schaul et al., 2016) over n-step transitions, as DOM-Q-Net uses it: a sum
//! tree for proportional sampling with stratified segments, new transitions at the current
//! maximum priority, and priorities (|TD| + ε)^α.

use std::collections::VecDeque;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::config::DqnConfig;
use super::features::{NO_PARENT, StateFeatures};
use crate::rng::Rng;

/// DOM-Q-Net's factorized action: a leaf, a goal token, and the mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DqnAction {
    /// Index into the state's `leaves`.
    pub leaf: u16,
    /// Index into the state's goal tokens (ignored by the page when clicking).
    pub token: u16,
    pub mode: Mode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mode {
    Click = 0,
    Type = 1,
}

/// An n-step transition: R = Σ γ^i r_{t+i}, bootstrapped from `next` with `discount` = γ^k.
#[derive(Clone, Debug)]
pub struct Transition {
    pub state: Arc<StateFeatures>,
    pub action: DqnAction,
    pub reward: f32,
    /// `None` when the episode ended within the n steps.
    pub next: Option<Arc<StateFeatures>>,
    pub discount: f32,
}

/// Turns one actor's stream of steps into n-step transitions.
#[derive(Debug)]
pub struct NStep {
    n: usize,
    gamma: f64,
    pending: VecDeque<(Arc<StateFeatures>, DqnAction, f32)>,
}

impl NStep {
    pub fn new(n: usize, gamma: f64) -> Self {
        NStep { n: n.max(1), gamma, pending: VecDeque::new() }
    }

    /// Records `state --action--> reward, next`; returns the transitions that became complete.
    pub fn push(&mut self, state: Arc<StateFeatures>, action: DqnAction, reward: f32, next: &Arc<StateFeatures>, done: bool) -> Vec<Transition> {
        self.pending.push_back((state, action, reward));
        let mut out = Vec::new();
        if done {
            while !self.pending.is_empty() {
                out.push(self.emit(None));
            }
        } else if self.pending.len() == self.n {
            out.push(self.emit(Some(next.clone())));
        }
        out
    }

    /// Drops unfinished steps (e.g. when an episode is abandoned).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    fn emit(&mut self, next: Option<Arc<StateFeatures>>) -> Transition {
        let mut reward = 0.0;
        let mut g = 1.0;
        for (_, _, r) in &self.pending {
            reward += g * *r as f64;
            g *= self.gamma;
        }
        let (state, action, _) = self.pending.pop_front().expect("non-empty");
        Transition { state, action, reward: reward as f32, next, discount: g as f32 }
    }
}

/// Largest priority the buffer takes: far above any (|TD| + ε)^α of an f32 TD error with α, ε ≤ 1,
/// and small enough that a million of them still sum to a finite total.
pub const MAX_PRIORITY: f64 = 1e300;

fn usable(p: f64) -> bool {
    (0.0..=MAX_PRIORITY).contains(&p)
}

/// A binary sum tree over `capacity` leaves.
#[derive(Clone, Debug)]
struct SumTree {
    size: usize,
    nodes: Vec<f64>,
}

impl SumTree {
    fn new(capacity: usize) -> Self {
        let size = capacity.next_power_of_two();
        SumTree { size, nodes: vec![0.0; 2 * size] }
    }
    fn total(&self) -> f64 {
        self.nodes[1]
    }
    fn get(&self, i: usize) -> f64 {
        self.nodes[self.size + i]
    }
    /// Refuses a priority that is not a usable number (see [`usable`]): one NaN would make the
    /// total NaN, and every later search would go astray.
    fn set(&mut self, i: usize, p: f64) -> Result<(), String> {
        if !usable(p) {
            return Err(format!("the priority {p} is not a finite number between 0 and {MAX_PRIORITY:e}"));
        }
        let mut k = self.size + i;
        self.nodes[k] = p;
        while k > 1 {
            k /= 2;
            self.nodes[k] = self.nodes[2 * k] + self.nodes[2 * k + 1];
        }
        Ok(())
    }
    /// The leaf whose cumulative range holds `mass`.
    fn find(&self, mut mass: f64) -> usize {
        let mut k = 1;
        while k < self.size {
            let left = self.nodes[2 * k];
            if mass < left || self.nodes[2 * k + 1] <= 0.0 {
                k *= 2;
            } else {
                mass -= left;
                k = 2 * k + 1;
            }
        }
        k - self.size
    }
}

/// A sampled batch: slots in the buffer and importance-sampling weights (max-normalised).
#[derive(Clone, Debug)]
pub struct Batch {
    pub indices: Vec<usize>,
    pub weights: Vec<f32>,
}

pub struct PrioritizedReplay {
    items: Vec<Option<Transition>>,
    tree: SumTree,
    next: usize,
    len: usize,
    alpha: f64,
    epsilon: f64,
    max_priority: f64,
    positives: usize,
    rng: Rng,
}

impl PrioritizedReplay {
    pub fn new(capacity: usize, alpha: f64, epsilon: f64, seed: u64) -> Self {
        PrioritizedReplay {
            items: (0..capacity).map(|_| None).collect(),
            tree: SumTree::new(capacity),
            next: 0,
            len: 0,
            alpha,
            epsilon,
            max_priority: 1.0,
            positives: 0,
            rng: Rng::new(seed ^ 0x5eed_0f4e_91a7),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn capacity(&self) -> usize {
        self.items.len()
    }

    /// Fraction of stored transitions with a positive (n-step) return: how sparse the reward is.
    pub fn positive_fraction(&self) -> f64 {
        if self.len == 0 { 0.0 } else { self.positives as f64 / self.len as f64 }
    }

    /// Stores a transition at the highest priority seen so far, replacing the oldest when full.
    pub fn push(&mut self, t: Transition) {
        let slot = self.next;
        if let Some(old) = &self.items[slot] {
            self.positives -= (old.reward > 0.0) as usize;
        } else {
            self.len += 1;
        }
        self.positives += (t.reward > 0.0) as usize;
        self.items[slot] = Some(t);
        // `max_priority` only ever takes priorities the tree accepted (or 1).
        let _ = self.tree.set(slot, self.max_priority);
        self.next = (self.next + 1) % self.items.len();
    }

    pub fn get(&self, index: usize) -> &Transition {
        self.items[index].as_ref().expect("sampled slots hold transitions")
    }

    /// Samples `batch` transitions proportionally to priority, one from each of `batch` equal
    /// segments of the total mass. Weights are (N·P(i))^-β / max.
    pub fn sample(&mut self, batch: usize, beta: f64) -> Batch {
        assert!(self.len > 0, "sampling from an empty buffer");
        let total = self.tree.total();
        let segment = total / batch as f64;
        let mut indices = Vec::with_capacity(batch);
        for b in 0..batch {
            let mass = (b as f64 + self.rng.next_f64()) * segment;
            let mut i = self.tree.find(mass.min(total * (1.0 - 1e-12)));
            if self.items.get(i).is_none_or(|t| t.is_none()) {
                i = self.tree.find(self.rng.next_f64() * total * (1.0 - 1e-12));
            }
            // Filled slots are 0..len: a search that still lands on an empty one (all priorities
            // 0, say) takes a filled slot at random rather than panicking on it.
            if self.items.get(i).is_none_or(|t| t.is_none()) {
                i = self.rng.below(self.len);
            }
            indices.push(i);
        }
        let weights = if beta == 0.0 {
            vec![1.0; batch]
        } else {
            // (N·P(i))^-β / max_j (N·P(j))^-β = (p_min / p_i)^β: the same weights, finite even
            // where a priority is 0.
            let p: Vec<f64> = indices.iter().map(|&i| self.tree.get(i)).collect();
            let p_min = p.iter().cloned().fold(f64::INFINITY, f64::min);
            p.iter().map(|&pi| if pi <= p_min { 1.0 } else { (p_min / pi).powf(beta) as f32 }).collect()
        };
        Batch { indices, weights }
    }

    /// Sets new priorities from the absolute TD errors of a sampled batch. A TD error that is not
    /// a finite number (a diverged update) is refused, and then no priority changes.
    pub fn update(&mut self, indices: &[usize], td_abs: &[f32]) -> Result<(), String> {
        let priorities: Vec<f64> = td_abs.iter().map(|&td| (td.abs() as f64 + self.epsilon).powf(self.alpha)).collect();
        if let Some((td, p)) = td_abs.iter().zip(&priorities).find(|(_, p)| !usable(**p)) {
            return Err(format!("a TD error of {td} gives the priority {p}; no priority was changed"));
        }
        for (&i, &p) in indices.iter().zip(&priorities) {
            self.max_priority = self.max_priority.max(p);
            self.tree.set(i, p)?;
        }
        Ok(())
    }

    pub fn priority(&self, index: usize) -> f64 {
        self.tree.get(index)
    }

    /// The newest `n` transitions with their priorities, oldest first (for saving a run).
    pub fn recent(&self, n: usize) -> Vec<StoredTransition> {
        let cap = self.items.len();
        let n = n.min(self.len);
        (0..n)
            .map(|k| (self.next + cap - n + k) % cap)
            .map(|i| {
                let t = self.get(i);
                StoredTransition {
                    state: (*t.state).clone(),
                    action: t.action,
                    reward: t.reward,
                    next: t.next.as_deref().cloned(),
                    discount: t.discount,
                    priority: self.tree.get(i),
                }
            })
            .collect()
    }

    /// Puts saved transitions back, with their priorities. Saved priorities that are not finite
    /// numbers between 0 and [`MAX_PRIORITY`] are refused, and then nothing is restored.
    pub fn restore(&mut self, saved: Vec<StoredTransition>) -> Result<(), String> {
        if let Some((k, s)) = saved.iter().enumerate().find(|(_, s)| !usable(s.priority)) {
            return Err(format!("saved transition {k} has the priority {}, not a finite number between 0 and {MAX_PRIORITY:e}", s.priority));
        }
        for s in saved {
            let slot = self.next;
            self.push(Transition { state: Arc::new(s.state), action: s.action, reward: s.reward, next: s.next.map(Arc::new), discount: s.discount });
            self.tree.set(slot, s.priority)?;
            self.max_priority = self.max_priority.max(s.priority);
        }
        Ok(())
    }
}

/// A transition as saved with a training run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredTransition {
    pub state: StateFeatures,
    pub action: DqnAction,
    pub reward: f32,
    pub next: Option<StateFeatures>,
    pub discount: f32,
    pub priority: f64,
}

impl StoredTransition {
    /// Checks a transition read back from a saved run (IndexedDB: data from storage, possibly
    /// damaged) against the network it will train: every length and index within the tables and
    /// caps of `cfg`, every number finite. An index past a table would panic in the network's
    /// lookups instead of giving a message.
    pub fn check(&self, cfg: &DqnConfig) -> Result<(), String> {
        check_state(&self.state, cfg).map_err(|e| format!("its state {e}"))?;
        if let Some(next) = &self.next {
            check_state(next, cfg).map_err(|e| format!("its next state {e}"))?;
        }
        let (leaves, goal) = (self.state.leaves.len(), self.state.goal.len());
        if self.action.leaf as usize >= leaves {
            return Err(format!("its action names leaf {} of a state with {leaves}", self.action.leaf));
        }
        // Without goal tokens the token head has one masked slot (see `batch::pack`).
        if self.action.token as usize >= goal.max(1) {
            return Err(format!("its action names goal token {} of a state with {goal}", self.action.token));
        }
        if !self.reward.is_finite() {
            return Err(format!("its reward is {}", self.reward));
        }
        if !(0.0..=1.0).contains(&self.discount) {
            return Err(format!("its discount is {}, not a number from 0 to 1", self.discount));
        }
        Ok(())
    }
}

/// The invariants `features::encode` gives every state, which `batch::pack` relies on.
fn check_state(s: &StateFeatures, cfg: &DqnConfig) -> Result<(), String> {
    let n = s.num_nodes();
    if n > cfg.max_nodes {
        return Err(format!("has {n} nodes, over the model's cap of {}", cfg.max_nodes));
    }
    for (what, len) in [("classes", s.classes.len()), ("texts", s.texts.len()), ("flags", s.flags.len()), ("parents", s.parents.len())] {
        if len != n {
            return Err(format!("has {len} {what} for {n} nodes"));
        }
    }
    if s.leaves.len() > cfg.max_leaves {
        return Err(format!("has {} leaves, over the model's cap of {}", s.leaves.len(), cfg.max_leaves));
    }
    if s.goal.len() > cfg.max_goal_tokens {
        return Err(format!("has {} goal tokens, over the model's cap of {}", s.goal.len(), cfg.max_goal_tokens));
    }
    // Each out-of-vocabulary slot is a distinct string of the state's nodes or goal.
    if s.n_oov as usize > n + s.goal.len() {
        return Err(format!("has {} out-of-vocabulary slots for {n} nodes and {} goal tokens", s.n_oov, s.goal.len()));
    }
    let out_of = |what: &str, i: usize, id: u64, table: usize| format!("has {what} {i} = {id}, outside its table of {table}");
    if let Some((i, &t)) = s.tags.iter().enumerate().find(|(_, t)| **t as usize >= cfg.tag_vocab) {
        return Err(out_of("tag", i, t as u64, cfg.tag_vocab));
    }
    if let Some((i, &c)) = s.classes.iter().enumerate().find(|(_, c)| **c as usize >= cfg.class_vocab) {
        return Err(out_of("class", i, c as u64, cfg.class_vocab));
    }
    let texts = cfg.text_vocab + s.n_oov as usize;
    if let Some((i, &t)) = s.texts.iter().enumerate().find(|(_, t)| **t as usize >= texts) {
        return Err(out_of("text", i, t as u64, texts));
    }
    if let Some((i, &t)) = s.goal.iter().enumerate().find(|(_, t)| **t as usize >= texts) {
        return Err(out_of("goal token", i, t as u64, texts));
    }
    if let Some((i, &p)) = s.parents.iter().enumerate().find(|(_, p)| **p != NO_PARENT && **p as usize >= n) {
        return Err(format!("has parent {i} = {p}, not one of its {n} nodes"));
    }
    if let Some((i, &l)) = s.leaves.iter().enumerate().find(|(_, l)| **l as usize >= n) {
        return Err(format!("has leaf {i} = node {l}, not one of its {n} nodes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(k: u16) -> Arc<StateFeatures> {
        Arc::new(StateFeatures { tags: vec![k], ..Default::default() })
    }
    const A: DqnAction = DqnAction { leaf: 0, token: 0, mode: Mode::Click };

    #[test]
    fn n_step_returns_and_terminal_flush() {
        let mut ns = NStep::new(3, 0.5);
        assert!(ns.push(st(0), A, 1.0, &st(1), false).is_empty());
        assert!(ns.push(st(1), A, 0.0, &st(2), false).is_empty());
        let t = ns.push(st(2), A, 4.0, &st(3), false);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].reward, 1.0 + 0.0 + 0.25 * 4.0);
        assert_eq!(t[0].discount, 0.125);
        assert_eq!(t[0].state.tags, [0]);
        assert_eq!(t[0].next.as_ref().unwrap().tags, [3]);
        let t = ns.push(st(3), A, 2.0, &st(4), true);
        assert_eq!(t.len(), 3, "the end flushes every pending step");
        assert_eq!(t[0].reward, 0.0 + 0.5 * 4.0 + 0.25 * 2.0);
        assert_eq!(t[2].reward, 2.0);
        assert!(t.iter().all(|x| x.next.is_none()));
    }

    #[test]
    fn sampling_follows_priorities() {
        let mut r = PrioritizedReplay::new(4, 1.0, 0.0, 3);
        for k in 0..4 {
            r.push(Transition { state: st(k), action: A, reward: k as f32, next: None, discount: 1.0 });
        }
        assert_eq!(r.positive_fraction(), 0.75);
        r.update(&[0, 1, 2, 3], &[1.0, 1.0, 1.0, 7.0]).unwrap();
        let mut hits = [0usize; 4];
        for _ in 0..500 {
            for i in r.sample(10, 0.0).indices {
                hits[i] += 1;
            }
        }
        let frac3 = hits[3] as f64 / 5000.0;
        assert!((frac3 - 0.7).abs() < 0.03, "slot 3 holds 70% of the mass, sampled {frac3}");
        let b = r.sample(4, 1.0);
        let max = b.weights.iter().cloned().fold(0.0, f32::max);
        assert_eq!(max, 1.0);
    }

    #[test]
    fn recent_transitions_survive_a_save_and_restore() {
        let mut r = PrioritizedReplay::new(3, 1.0, 0.0, 1);
        for k in 0..5 {
            r.push(Transition { state: st(k), action: A, reward: k as f32, next: Some(st(k + 1)), discount: 0.5 });
        }
        r.update(&[1], &[9.0]).unwrap(); // slot 1 holds the 5th transition (k = 4)
        let saved = r.recent(2);
        assert_eq!(saved.iter().map(|t| t.state.tags[0]).collect::<Vec<_>>(), [3, 4], "newest two, oldest first");
        assert_eq!(saved[1].priority, 9.0);
        let mut back = PrioritizedReplay::new(3, 1.0, 0.0, 1);
        back.restore(saved.clone()).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back.recent(2), saved);
    }

    #[test]
    fn non_finite_priorities_are_refused_and_sampling_goes_on() {
        // A NaN TD error used to make the tree's total NaN; the next sample then walked to an
        // empty slot and panicked.
        let mut r = PrioritizedReplay::new(8, 0.5, 1e-6, 2);
        for k in 0..4 {
            r.push(Transition { state: st(k), action: A, reward: 0.0, next: None, discount: 1.0 });
        }
        r.update(&[0, 1], &[1.0, 3.0]).unwrap();
        let priorities = |r: &PrioritizedReplay| (0..4).map(|i| r.priority(i)).collect::<Vec<_>>();
        let before = priorities(&r);
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let refused = r.update(&[2, 1], &[0.5, bad]);
            assert_eq!(priorities(&r), before, "{bad}: no priority changed, not even the good one");
            let err = refused.unwrap_err();
            assert!(err.starts_with(&format!("a TD error of {bad} gives the priority")), "{err}");
            for _ in 0..50 {
                let b = r.sample(4, 0.5);
                assert!(b.indices.iter().all(|&i| i < 4), "{:?}", b.indices);
                assert!(b.weights.iter().all(|w| w.is_finite()), "{:?}", b.weights);
            }
        }
        // A saved run whose priorities are not usable is refused whole.
        let mut saved = r.recent(4);
        saved[2].priority = f64::NAN;
        let mut back = PrioritizedReplay::new(8, 0.5, 1e-6, 2);
        let err = back.restore(saved.clone()).unwrap_err();
        assert_eq!(err, "saved transition 2 has the priority NaN, not a finite number between 0 and 1e300");
        assert_eq!(back.len(), 0, "nothing restored");
        saved[2].priority = -1.0;
        assert!(back.restore(saved.clone()).unwrap_err().contains("priority -1"));
        assert_eq!(back.len(), 0, "nothing restored");
        saved[2].priority = 0.0;
        back.restore(saved).unwrap();
        assert_eq!(back.len(), 4);
        for _ in 0..50 {
            let b = back.sample(4, 1.0);
            assert!(b.weights.iter().all(|w| w.is_finite()), "a zero priority gives finite weights: {:?}", b.weights);
        }
    }

    #[test]
    fn saved_transitions_are_checked_against_the_network_before_they_are_restored() {
        // A snapshot's replay comes back from IndexedDB; a damaged one used to reach the
        // network's lookups, where an index past a table panics.
        let cfg = DqnConfig::default();
        let state = StateFeatures {
            tags: vec![3, 4, 4],
            classes: vec![2, 2, 5],
            texts: vec![0, 7, cfg.text_vocab as u32],
            flags: vec![0, 1, 0],
            parents: vec![NO_PARENT, 0, 0],
            leaves: vec![1, 2],
            goal: vec![7, cfg.text_vocab as u32],
            n_oov: 1,
        };
        let good = StoredTransition {
            state: state.clone(),
            action: DqnAction { leaf: 1, token: 1, mode: Mode::Type },
            reward: 0.5,
            next: Some(state.clone()),
            discount: 0.9,
            priority: 1.0,
        };
        good.check(&cfg).unwrap();
        type Damage = (&'static str, Box<dyn Fn(&mut StoredTransition)>);
        let damaged: Vec<Damage> = vec![
            ("its state has 2 classes for 3 nodes", Box::new(|t| t.state.classes.pop().map(|_| ()).unwrap())),
            ("its next state has tag 1 = 100, outside its table of 100", Box::new(|t| t.next.as_mut().unwrap().tags[1] = 100)),
            ("its state has class 0 = 9999, outside its table of 100", Box::new(|t| t.state.classes[0] = 9999)),
            ("its state has text 2 = 601, outside its table of 601", Box::new(|t| t.state.texts[2] = 601)),
            ("its state has goal token 0 = 700, outside its table of 601", Box::new(|t| t.state.goal[0] = 700)),
            ("its state has parent 2 = 3, not one of its 3 nodes", Box::new(|t| t.state.parents[2] = 3)),
            ("its state has leaf 0 = node 7, not one of its 3 nodes", Box::new(|t| t.state.leaves[0] = 7)),
            ("its state has 50 out-of-vocabulary slots for 3 nodes and 2 goal tokens", Box::new(|t| t.state.n_oov = 50)),
            ("its state has 19 goal tokens, over the model's cap of 18", Box::new(|t| t.state.goal = vec![7; 19])),
            ("its state has 201 nodes, over the model's cap of 200", Box::new(|t| t.state.tags = vec![3; 201])),
            ("its action names leaf 2 of a state with 2", Box::new(|t| t.action.leaf = 2)),
            ("its action names goal token 2 of a state with 2", Box::new(|t| t.action.token = 2)),
            ("its reward is NaN", Box::new(|t| t.reward = f32::NAN)),
            ("its discount is inf, not a number from 0 to 1", Box::new(|t| t.discount = f32::INFINITY)),
        ];
        for (want, damage) in damaged {
            let mut t = good.clone();
            damage(&mut t);
            assert_eq!(t.check(&cfg).unwrap_err(), want);
        }
        // A state without goal tokens has one (masked) token slot.
        let mut t = good.clone();
        t.state.goal.clear();
        t.action.token = 0;
        t.check(&cfg).unwrap();
    }

    #[test]
    fn ring_replaces_the_oldest_and_new_items_get_max_priority() {
        let mut r = PrioritizedReplay::new(2, 0.5, 0.0, 1);
        r.push(Transition { state: st(0), action: A, reward: 1.0, next: None, discount: 1.0 });
        r.update(&[0], &[16.0]).unwrap();
        r.push(Transition { state: st(1), action: A, reward: 0.0, next: None, discount: 1.0 });
        assert_eq!(r.priority(1), 4.0, "max priority so far");
        r.push(Transition { state: st(2), action: A, reward: 0.0, next: None, discount: 1.0 });
        assert_eq!(r.len(), 2);
        assert_eq!(r.get(0).state.tags, [2]);
        assert_eq!(r.positive_fraction(), 0.0);
    }
}
