//! A batch of navigator states laid out for the network: padded to one element and field count,
//! each distinct element's tokens kept once, the open choices as a mask.

use std::collections::HashMap;

use super::features::{ATTRIBUTES, ELEMENT_FEATURES, NavAction, NavState};
use super::model::CLOSED;
use crate::learn::vocab::PAD;

/// A batch of states padded to the same number of elements and fields. An element's encoding
/// before the LSTM depends only on its tokens, and a batch's states repeat most of their elements
/// (the same site step after step, episode after episode), so each distinct element's tokens are
/// read once and its encoding shared by every place it appears.
#[derive(Clone, Debug)]
pub struct Padded {
    pub b: usize,
    /// Elements and fields per state after padding (fields at least 1).
    pub e: usize,
    pub f: usize,
    /// Each state's own number of elements.
    pub(super) lens: Vec<usize>,
    /// Distinct elements (by their tokens; padding reads as an element without tokens).
    pub distinct: usize,
    /// For each (state, element) slot, its distinct element.
    pub(super) el_rows: Vec<i64>,
    /// Non-pad token ids of the distinct elements' attributes and the (distinct element,
    /// attribute) group of each.
    pub(super) el_tokens: Vec<i64>,
    pub(super) el_groups: Vec<i64>,
    /// Tokens per (distinct element, attribute) group, at least 1 (empty groups stay zero).
    pub(super) el_counts: Vec<f32>,
    pub(super) fd_tokens: Vec<i64>,
    pub(super) fd_groups: Vec<i64>,
    pub(super) fd_counts: Vec<f32>,
    /// [b, e, ELEMENT_FEATURES].
    pub(super) features: Vec<f32>,
    /// [b, f·e + e]: 0 for open choices, CLOSED for the rest.
    pub(super) mask: Vec<f32>,
}

impl Padded {
    pub fn new(states: &[&NavState]) -> Padded {
        let b = states.len();
        let e = states.iter().map(|s| s.elements).max().unwrap_or(0).max(1);
        let f = states.iter().map(|s| s.fields).max().unwrap_or(0).max(1);
        let mut p = Padded {
            b,
            e,
            f,
            lens: states.iter().map(|s| s.elements).collect(),
            distinct: 0,
            el_rows: Vec::with_capacity(b * e),
            el_tokens: Vec::new(),
            el_groups: Vec::new(),
            el_counts: Vec::new(),
            fd_tokens: Vec::new(),
            fd_groups: Vec::new(),
            fd_counts: vec![1.0; b * f],
            features: vec![0.0; b * e * ELEMENT_FEATURES],
            mask: vec![CLOSED; b * (f * e + e)],
        };
        let no_tokens = [PAD; ATTRIBUTES];
        let mut seen: HashMap<&[u32], usize> = HashMap::new();
        for (si, s) in states.iter().enumerate() {
            let t = s.max_tokens;
            for el in 0..e {
                let toks = if el < s.elements { &s.element_tokens[el * ATTRIBUTES * t..(el + 1) * ATTRIBUTES * t] } else { &no_tokens[..] };
                let row = p.distinct_row(&mut seen, toks);
                p.el_rows.push(row);
            }
            for el in 0..s.elements {
                let at = (si * e + el) * ELEMENT_FEATURES;
                p.features[at..at + ELEMENT_FEATURES].copy_from_slice(&s.element_features[el * ELEMENT_FEATURES..(el + 1) * ELEMENT_FEATURES]);
            }
            for fi in 0..s.fields {
                let group = si * f + fi;
                let mut n = 0;
                for &tok in s.field_tokens[fi * t..(fi + 1) * t].iter().filter(|&&x| x != PAD) {
                    p.fd_tokens.push(tok as i64);
                    p.fd_groups.push(group as i64);
                    n += 1;
                }
                p.fd_counts[group] = n.max(1) as f32;
            }
            let row = si * (f * e + e);
            for fi in 0..s.fields {
                for el in 0..s.elements {
                    if s.set_open[fi * s.elements + el] {
                        p.mask[row + fi * e + el] = 0.0;
                    }
                }
            }
            for el in 0..s.elements {
                if s.click_open[el] {
                    p.mask[row + f * e + el] = 0.0;
                }
            }
        }
        p
    }

    /// The distinct element with these tokens (all attributes', `ATTRIBUTES` runs of equal
    /// length), added when new.
    fn distinct_row<'a>(&mut self, seen: &mut HashMap<&'a [u32], usize>, toks: &'a [u32]) -> i64 {
        if let Some(&row) = seen.get(toks) {
            return row as i64;
        }
        let row = self.distinct;
        self.distinct += 1;
        seen.insert(toks, row);
        let t = toks.len() / ATTRIBUTES;
        for a in 0..ATTRIBUTES {
            let group = row * ATTRIBUTES + a;
            let mut n = 0;
            for &tok in toks[a * t..(a + 1) * t].iter().filter(|&&x| x != PAD) {
                self.el_tokens.push(tok as i64);
                self.el_groups.push(group as i64);
                n += 1;
            }
            self.el_counts.push(n.max(1) as f32);
        }
        row as i64
    }

    /// Index of a choice in this batch's padded flat layout.
    pub fn index(&self, a: NavAction) -> usize {
        match a {
            NavAction::Set { field, element } => field * self.e + element,
            NavAction::Click { element } => self.f * self.e + element,
        }
    }

    /// The choice at a padded flat index.
    pub fn choice(&self, i: usize) -> NavAction {
        if i < self.f * self.e {
            NavAction::Set { field: i / self.e, element: i % self.e }
        } else {
            NavAction::Click { element: i - self.f * self.e }
        }
    }

    pub fn width(&self) -> usize {
        self.f * self.e + self.e
    }
}
