//! The DQN head's replay buffer: n-step transitions from whole episodes, oldest out first,
//! sampled uniformly, and written compactly so a run's snapshot can carry all of it.
//!
//! Each stored step keeps its own state once; its bootstrap state is the step `next` places
//! later in the same episode, which (oldest out first, episodes stored whole) is always still
//! there while the step is.

use std::collections::VecDeque;

use super::agent::Transition;
use super::features::{NavAction, NavState};
use crate::rng::Rng;

/// One stored step.
#[derive(Clone, Debug, PartialEq)]
pub struct Stored {
    pub state: NavState,
    pub action: NavAction,
    /// Σ_{i<k} γ^i r_{t+i}, k = min(n, steps left), clipped as configured.
    pub ret: f32,
    /// Steps to the bootstrap state (n), or 0 when the n-step window reaches the episode's end.
    pub next: u16,
}

#[derive(Debug)]
pub struct Replay {
    items: VecDeque<Stored>,
    capacity: usize,
}

impl Replay {
    pub fn new(capacity: usize) -> Self {
        Replay { items: VecDeque::with_capacity(capacity.min(4_096)), capacity }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn get(&self, i: usize) -> &Stored {
        &self.items[i]
    }

    /// The state a stored step bootstraps from, if any.
    pub fn next_state(&self, i: usize) -> Option<&NavState> {
        let k = self.items[i].next as usize;
        (k > 0).then(|| &self.items[i + k].state)
    }

    /// Stores an episode's steps as n-step transitions (every episode end is terminal: success,
    /// failure and the step limit alike, as the A2C head treats them). An episode longer than
    /// the capacity keeps its last steps.
    pub fn push_episode(&mut self, episode: &[Transition], n: usize, discount: f64, clip: Option<f64>) {
        let len = episode.len();
        let skip = len.saturating_sub(self.capacity);
        for t in skip..len {
            let k = n.min(len - t);
            let mut g = 0.0;
            for i in (0..k).rev() {
                g = episode[t + i].reward + discount * g;
            }
            if let Some(c) = clip {
                g = g.clamp(-c, c);
            }
            let next = if t + n < len { n as u16 } else { 0 };
            if self.items.len() == self.capacity {
                self.items.pop_front();
            }
            self.items.push_back(Stored { state: episode[t].state.clone(), action: episode[t].action, ret: g as f32, next });
        }
    }

    /// `count` indices drawn uniformly, with replacement (as reverb samples).
    pub fn sample(&self, rng: &mut Rng, count: usize) -> Vec<usize> {
        (0..count).map(|_| rng.below(self.items.len())).collect()
    }

    /// The buffer as bytes: u32 capacity · u32 count · per step its state, action, return and
    /// next offset. Integers are LEB128 varints (token ids are mostly small and mostly padding).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Vec::new();
        put(&mut w, self.capacity as u64);
        put(&mut w, self.items.len() as u64);
        for s in &self.items {
            let st = &s.state;
            for v in [st.elements, st.fields, st.max_tokens] {
                put(&mut w, v as u64);
            }
            for &t in st.element_tokens.iter().chain(&st.field_tokens) {
                put(&mut w, t as u64);
            }
            for &x in &st.element_features {
                w.extend_from_slice(&x.to_le_bytes());
            }
            put_bits(&mut w, &st.set_open);
            put_bits(&mut w, &st.click_open);
            for &r in &st.refs {
                put(&mut w, r as u64);
            }
            for v in &st.values {
                put(&mut w, v.len() as u64);
                w.extend_from_slice(v.as_bytes());
            }
            match s.action {
                NavAction::Set { field, element } => {
                    w.push(0);
                    put(&mut w, field as u64);
                    put(&mut w, element as u64);
                }
                NavAction::Click { element } => {
                    w.push(1);
                    put(&mut w, element as u64);
                }
            }
            w.extend_from_slice(&s.ret.to_le_bytes());
            put(&mut w, s.next as u64);
        }
        w
    }

    /// Reads [`Self::to_bytes`]; `limits` (elements, fields, tokens per attribute, vocabulary
    /// rows) are the navigator's, so a damaged or foreign buffer cannot allocate without bound,
    /// and every token id is a row of its embedding table (a lookup past it would abort the tab).
    pub fn from_bytes(bytes: &[u8], capacity: usize, limits: (usize, usize, usize, usize)) -> Result<Replay, String> {
        let mut r = Reader { bytes, at: 0 };
        let cap = r.int(u32::MAX as u64)? as usize;
        if cap != capacity {
            return Err(format!("its replay holds up to {cap} steps, this navigator's {capacity}"));
        }
        let count = r.int(capacity as u64)? as usize;
        let (max_e, max_f, max_t, vocab) = limits;
        let last_id = vocab.saturating_sub(1) as u64;
        let mut items = VecDeque::with_capacity(count);
        for _ in 0..count {
            let elements = r.int(max_e as u64)? as usize;
            let fields = r.int(max_f as u64)? as usize;
            let max_tokens = r.int(max_t as u64)? as usize;
            let mut ids = |n: usize| (0..n).map(|_| r.int(last_id).map(|v| v as u32)).collect::<Result<Vec<u32>, String>>();
            let element_tokens = ids(elements * super::features::ATTRIBUTES * max_tokens)?;
            let field_tokens = ids(fields * max_tokens)?;
            let nf = elements * super::features::ELEMENT_FEATURES;
            let element_features: Vec<f32> = r.take(4 * nf)?.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
            if element_features.iter().any(|x| !x.is_finite()) {
                return Err("a stored state has a feature that is not a finite number".into());
            }
            let set_open = r.bits(fields * elements)?;
            let click_open = r.bits(elements)?;
            let refs = (0..elements).map(|_| r.int(u32::MAX as u64).map(|v| v as u32)).collect::<Result<_, _>>()?;
            let mut values = Vec::with_capacity(fields);
            for _ in 0..fields {
                let n = r.int(1 << 20)? as usize;
                values.push(String::from_utf8(r.take(n)?.to_vec()).map_err(|_| "a value is not UTF-8".to_string())?);
            }
            let action = match r.take(1)?[0] {
                0 => NavAction::Set { field: r.int(fields as u64)? as usize, element: r.int(elements as u64)? as usize },
                1 => NavAction::Click { element: r.int(elements as u64)? as usize },
                k => return Err(format!("unknown action kind {k}")),
            };
            let ret = f32::from_le_bytes(r.take(4)?.try_into().unwrap());
            let next = r.int(u16::MAX as u64)? as u16;
            let state = NavState { elements, fields, element_tokens, element_features, field_tokens, set_open, click_open, refs, values, max_tokens };
            if !state.is_open(action) || !ret.is_finite() {
                return Err("a stored step does not fit its state".into());
            }
            items.push_back(Stored { state, action, ret, next });
        }
        if r.at != bytes.len() {
            return Err("trailing bytes after the replay".into());
        }
        for (i, s) in items.iter().enumerate() {
            if i + s.next as usize >= items.len() && s.next > 0 {
                return Err("a stored step bootstraps from a step that is not there".into());
            }
        }
        Ok(Replay { items, capacity })
    }
}

fn put(w: &mut Vec<u8>, mut v: u64) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            w.push(byte);
            return;
        }
        w.push(byte | 0x80);
    }
}

fn put_bits(w: &mut Vec<u8>, bits: &[bool]) {
    for chunk in bits.chunks(8) {
        w.push(chunk.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | ((b as u8) << i)));
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let s = self.bytes.get(self.at..self.at.checked_add(n).ok_or("bad length")?).ok_or("the replay ends too early")?;
        self.at += n;
        Ok(s)
    }

    /// A varint no larger than `max`.
    fn int(&mut self, max: u64) -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.take(1)?[0];
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return if v <= max { Ok(v) } else { Err(format!("a count of {v} where at most {max} fits")) };
            }
        }
        Err("a number runs on".into())
    }

    fn bits(&mut self, n: usize) -> Result<Vec<bool>, String> {
        let bytes = self.take(n.div_ceil(8))?;
        Ok((0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::vocab::Vocab;
    use crate::navigator::NavigatorConfig;
    use crate::navigator::features::{EpisodeMemory, encode, tests::observation};

    fn episode(len: usize) -> Vec<Transition> {
        let cfg = NavigatorConfig::default();
        let mut vocab = Vocab::new(cfg.vocab_cap);
        let s = encode(&observation(), &cfg, &mut vocab, true, &mut EpisodeMemory::default());
        (0..len).map(|i| Transition { state: s.clone(), action: NavAction::Click { element: i % s.elements }, reward: i as f64 + 1.0 }).collect()
    }

    #[test]
    fn n_step_returns_bootstrap_inside_the_episode_and_stop_at_its_end() {
        let mut r = Replay::new(100);
        r.push_episode(&episode(4), 2, 0.5, None);
        assert_eq!(r.len(), 4);
        // Rewards 1, 2, 3, 4: step 0 → 1 + 0.5·2 and bootstraps from step 2.
        assert_eq!((r.get(0).ret, r.get(0).next), (2.0, 2));
        assert_eq!((r.get(1).ret, r.get(1).next), (2.0 + 1.5, 2));
        assert_eq!((r.get(2).ret, r.get(2).next), (3.0 + 2.0, 0), "the window reaches the end: terminal");
        assert_eq!((r.get(3).ret, r.get(3).next), (4.0, 0));
        assert!(r.next_state(0).is_some() && r.next_state(2).is_none());
        let mut c = Replay::new(100);
        c.push_episode(&episode(4), 2, 0.5, Some(1.0));
        assert!((0..4).all(|i| c.get(i).ret == 1.0), "clipped to ±1");
    }

    #[test]
    fn the_oldest_steps_go_first_and_bootstrap_states_stay() {
        let mut r = Replay::new(5);
        r.push_episode(&episode(3), 1, 0.9, None);
        r.push_episode(&episode(3), 1, 0.9, None);
        assert_eq!(r.len(), 5);
        assert_eq!(r.get(0).ret, 2.0, "the first step of the first episode left");
        for i in 0..r.len() {
            if r.get(i).next > 0 {
                assert!(r.next_state(i).is_some());
            }
        }
        let mut rng = Rng::new(1);
        assert!(r.sample(&mut rng, 50).iter().all(|&i| i < 5));
    }

    #[test]
    fn bytes_round_trip_and_damage_is_refused() {
        let mut r = Replay::new(50);
        let mut ep = episode(6);
        ep[2].action = NavAction::Set { field: 1, element: 1 };
        r.push_episode(&ep, 3, 0.99, Some(1.0));
        let bytes = r.to_bytes();
        let limits = (250, 25, 10, 1_000);
        let back = Replay::from_bytes(&bytes, 50, limits).unwrap();
        assert_eq!(back.items, r.items);
        assert!(Replay::from_bytes(&bytes, 60, limits).unwrap_err().contains("up to 50"));
        assert!(Replay::from_bytes(&bytes[..bytes.len() - 3], 50, limits).is_err());
        assert!(Replay::from_bytes(&[bytes.as_slice(), &[0]].concat(), 50, limits).unwrap_err().contains("trailing"));
        // Fewer allowed elements than the stored states have.
        assert!(Replay::from_bytes(&bytes, 50, (1, 25, 10, 1_000)).is_err());
        // Word ids past the vocabulary's table (its embedding lookup would abort the tab).
        let max_id = r.items.iter().flat_map(|s| s.state.element_tokens.iter().chain(&s.state.field_tokens)).copied().max().unwrap();
        assert!(max_id > 2, "the states carry real words");
        let e = Replay::from_bytes(&bytes, 50, (250, 25, 10, max_id as usize)).unwrap_err();
        assert!(e.contains(&format!("at most {}", max_id - 1)), "{e}");
        assert!(Replay::from_bytes(&bytes, 50, (250, 25, 10, max_id as usize + 1)).is_ok());
        // A feature that is not a number.
        let mut nan = Replay::new(50);
        let mut ep = episode(2);
        ep[0].state.element_features[0] = f32::NAN;
        nan.push_episode(&ep, 3, 0.99, None);
        assert!(Replay::from_bytes(&nan.to_bytes(), 50, limits).unwrap_err().contains("finite"));
    }
}
