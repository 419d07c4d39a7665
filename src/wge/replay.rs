//! WGE's grouped replay buffer (reference-implementations.md §2.6): only successful episodes are
//! kept, grouped by the set of field keys of their instruction, so a task whose goals come in
//! several shapes (email-inbox's forward / reply / delete) is replayed evenly whatever shape
//! exploration happens to solve most.

use std::collections::BTreeMap;
use std::collections::VecDeque;

use crate::env::{Action, Observation};
use crate::rng::Rng;

use super::domnet_config::NeuralConfig;
use super::explore::WorkflowEpisode;

/// One episode as the neural policy learns from it: the observation before each action, the
/// action, the instruction's field keys and the episode's undiscounted return.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayEpisode {
    pub steps: Vec<(Observation, Action)>,
    /// Sorted and without repeats (see [`ReplayEpisode::new`]).
    pub field_keys: Vec<String>,
    pub ret: f64,
}

impl ReplayEpisode {
    /// An episode whose group is the field keys of its first observation's instruction.
    pub fn new(steps: Vec<(Observation, Action)>, ret: f64) -> Self {
        let mut keys: Vec<String> = steps.first().map(|(o, _)| o.instruction.fields.iter().map(|f| f.key.clone()).collect()).unwrap_or_default();
        keys.sort();
        keys.dedup();
        ReplayEpisode { steps, field_keys: keys, ret }
    }
}

impl From<&WorkflowEpisode> for ReplayEpisode {
    /// The workflow policy's episode as the neural policy learns from it: its (observation,
    /// action) pairs, its goal's field keys and its return (the raw reward).
    fn from(ep: &WorkflowEpisode) -> Self {
        let mut field_keys = ep.field_keys.clone();
        field_keys.sort();
        field_keys.dedup();
        ReplayEpisode { steps: ep.pairs().map(|(o, a)| (o.clone(), a.clone())).collect(), field_keys, ret: ep.ret() }
    }
}

/// Why an episode was not stored.
#[derive(Clone, Debug, PartialEq)]
pub enum Refused {
    /// Its return is not the one the buffer keeps.
    NotSuccessful(f64),
    /// It has no steps to learn from.
    Empty,
}

pub struct GroupedReplay {
    groups: BTreeMap<Vec<String>, VecDeque<ReplayEpisode>>,
    capacity: usize,
    min_group: usize,
    keep_return: f64,
    rng: Rng,
}

impl GroupedReplay {
    pub fn new(cfg: &NeuralConfig) -> Self {
        GroupedReplay {
            groups: BTreeMap::new(),
            capacity: cfg.replay_group_capacity,
            min_group: cfg.replay_min_group,
            keep_return: cfg.replay_return,
            rng: Rng::new(cfg.seed ^ 0x9e71a7),
        }
    }

    /// Stores a successful episode in its group; when the group is full its oldest episode goes.
    pub fn push(&mut self, episode: ReplayEpisode) -> Result<(), Refused> {
        if episode.ret != self.keep_return {
            return Err(Refused::NotSuccessful(episode.ret));
        }
        if episode.steps.is_empty() {
            return Err(Refused::Empty);
        }
        let group = self.groups.entry(episode.field_keys.clone()).or_default();
        if group.len() >= self.capacity {
            group.pop_front();
        }
        group.push_back(episode);
        Ok(())
    }

    /// Episodes stored, over all groups.
    pub fn len(&self) -> usize {
        self.groups.values().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each group's field keys and size.
    pub fn groups(&self) -> impl Iterator<Item = (&[String], usize)> {
        self.groups.iter().map(|(k, g)| (k.as_slice(), g.len()))
    }

    /// Whether some group holds enough episodes to be sampled.
    pub fn ready(&self) -> bool {
        self.groups.values().any(|g| g.len() >= self.min_group)
    }

    /// `n` episodes: each from a group drawn uniformly among those holding at least the minimum,
    /// then uniformly within it. Empty when no group is ready.
    pub fn sample(&mut self, n: usize) -> Vec<&ReplayEpisode> {
        let ready: Vec<&VecDeque<ReplayEpisode>> = self.groups.values().filter(|g| g.len() >= self.min_group).collect();
        if ready.is_empty() {
            return Vec::new();
        }
        let rng = &mut self.rng;
        (0..n)
            .map(|_| {
                let g = ready[rng.below(ready.len())];
                &g[rng.below(g.len())]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::{Field, Instruction};

    fn episode(keys: &[&str], id: u32, ret: f64) -> ReplayEpisode {
        let fields = keys.iter().map(|k| Field { key: k.to_string(), value: "v".into() }).collect();
        let obs = Observation { instruction: Instruction::new("do it", fields), ..Default::default() };
        ReplayEpisode::new(vec![(obs, Action::Click(id))], ret)
    }

    fn cfg(capacity: usize, min_group: usize) -> NeuralConfig {
        NeuralConfig { replay_group_capacity: capacity, replay_min_group: min_group, ..NeuralConfig::default() }
    }

    fn id(e: &ReplayEpisode) -> u32 {
        e.steps[0].1.target().expect("an element action")
    }

    #[test]
    fn only_successful_episodes_with_steps_are_kept() {
        let mut r = GroupedReplay::new(&NeuralConfig::default());
        assert_eq!(r.push(episode(&["a"], 1, 0.0)), Err(Refused::NotSuccessful(0.0)));
        assert_eq!(r.push(episode(&["a"], 1, -1.0)), Err(Refused::NotSuccessful(-1.0)));
        assert_eq!(r.push(episode(&["a"], 1, 0.8)), Err(Refused::NotSuccessful(0.8)));
        assert_eq!(r.push(ReplayEpisode::new(vec![], 1.0)), Err(Refused::Empty));
        assert!(r.is_empty());
        r.push(episode(&["a"], 1, 1.0)).unwrap();
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn groups_are_sets_of_field_keys_and_a_full_group_evicts_its_oldest() {
        let mut r = GroupedReplay::new(&cfg(3, 1));
        for i in 0..5 {
            r.push(episode(&["to", "from"], i, 1.0)).unwrap();
        }
        // The same keys in another order (and repeated) are the same group.
        r.push(episode(&["from", "to", "to"], 5, 1.0)).unwrap();
        r.push(episode(&["to"], 100, 1.0)).unwrap();
        let groups: Vec<(Vec<String>, usize)> = r.groups().map(|(k, n)| (k.to_vec(), n)).collect();
        assert_eq!(groups, vec![(vec!["from".to_string(), "to".into()], 3), (vec!["to".to_string()], 1)]);
        // Episodes 0, 1 and 2 were evicted, oldest first; the other group lost nothing.
        let mut seen: Vec<u32> = r.sample(400).into_iter().map(id).collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen, vec![3, 4, 5, 100]);
    }

    #[test]
    fn a_group_is_sampled_only_once_it_holds_the_minimum() {
        let mut r = GroupedReplay::new(&cfg(1000, 100));
        for i in 0..99 {
            r.push(episode(&["a"], i, 1.0)).unwrap();
        }
        for i in 0..150 {
            r.push(episode(&["b"], 1000 + i, 1.0)).unwrap();
        }
        assert!(r.ready());
        let drawn = r.sample(200);
        assert_eq!(drawn.len(), 200);
        assert!(drawn.iter().all(|e| e.field_keys == ["b"]), "group a has 99 < 100 episodes");
        r.push(episode(&["a"], 99, 1.0)).unwrap();
        assert!(r.sample(200).iter().any(|e| e.field_keys == ["a"]));

        let mut small = GroupedReplay::new(&cfg(1000, 100));
        small.push(episode(&["a"], 1, 1.0)).unwrap();
        assert!(!small.ready());
        assert!(small.sample(5).is_empty());
    }

    #[test]
    fn groups_are_drawn_uniformly_whatever_their_sizes() {
        let mut r = GroupedReplay::new(&cfg(1000, 2));
        for i in 0..900 {
            r.push(episode(&["big"], i, 1.0)).unwrap();
        }
        for i in 0..2 {
            r.push(episode(&["small"], 5000 + i, 1.0)).unwrap();
        }
        let n = 4000;
        let small = r.sample(n).iter().filter(|e| e.field_keys == ["small"]).count();
        // Uniform over the two groups: half the draws, give or take 5 standard deviations (~160).
        assert!((small as f64 - n as f64 / 2.0).abs() < 160.0, "{small} of {n} from the small group");
        // Within a group, uniform too: both small episodes are drawn.
        let ids: std::collections::BTreeSet<u32> = r.sample(n).into_iter().map(id).filter(|&i| i >= 5000).collect();
        assert_eq!(ids.len(), 2);
    }
}
