//! Packs several states into padded host arrays for one forward pass. Pure Rust: the model turns
//! these into tensors on whatever device it runs on.
//!
//! Nodes of state `k` occupy rows `k*v .. k*v + n_k` of the flat node arrays (`v` = most nodes in
//! the batch); padding rows have `<pad>` ids and are masked. Masks are additive (0 or
//! [`NEG`]) so they broadcast in plain float arithmetic on every backend.

use super::config::DqnConfig;
use super::features::{FOCUSED, NO_PARENT, StateFeatures, TAMPERED};
use super::vocab::PAD;
use crate::rng::Rng;

/// Added to masked entries: far below any real Q-value, finite so arithmetic stays defined.
pub const NEG: f32 = -1.0e9;

#[derive(Clone, Debug, Default)]
pub struct Packed {
    pub b: usize,
    pub v: usize,
    pub l: usize,
    pub g: usize,
    /// Goal positions encoded one-hot (the config's `max_goal_tokens`).
    pub positions: usize,
    pub n_oov: usize,
    /// A fresh N(0, 1) vector per OOV slot, [n_oov * text_dim], shared by the DOM and the goal.
    pub oov_vectors: Vec<f32>,
    pub tags: Vec<i64>,
    pub classes: Vec<i64>,
    /// Rows of the batch's text table: vocabulary ids, then `text_vocab + offset` for OOV slots.
    pub texts: Vec<i64>,
    pub focused: Vec<f32>,
    pub tampered: Vec<f32>,
    /// 1 where the node has text and its state has goal tokens (the alignment is defined).
    pub text_valid: Vec<f32>,
    /// Additive node mask, [b*v].
    pub node_mask: Vec<f32>,
    /// Directed edges (both directions of every tree edge), as flat node rows.
    pub edge_src: Vec<i64>,
    pub edge_dst: Vec<i64>,
    /// Flat node row of each leaf slot, [b*l] (padding points at the state's root).
    pub leaf_rows: Vec<i64>,
    pub leaf_mask: Vec<f32>,
    pub goal_ids: Vec<i64>,
    pub goal_mask: Vec<f32>,
    /// One-hot positions, [b*g*positions].
    pub goal_pos: Vec<f32>,
}

pub fn pack(states: &[&StateFeatures], cfg: &DqnConfig, rng: &mut Rng) -> Packed {
    let b = states.len();
    let v = states.iter().map(|s| s.num_nodes()).max().unwrap_or(1).max(1);
    let l = states.iter().map(|s| s.leaves.len()).max().unwrap_or(1).max(1);
    let g = states.iter().map(|s| s.goal.len()).max().unwrap_or(1).max(1);
    let positions = cfg.max_goal_tokens;
    let text_vocab = cfg.text_vocab as u32;
    let mut p = Packed { b, v, l, g, positions, ..Default::default() };
    p.tags.resize(b * v, PAD as i64);
    p.classes.resize(b * v, PAD as i64);
    p.texts.resize(b * v, PAD as i64);
    p.focused.resize(b * v, 0.0);
    p.tampered.resize(b * v, 0.0);
    p.text_valid.resize(b * v, 0.0);
    p.node_mask.resize(b * v, NEG);
    p.leaf_rows.resize(b * l, 0);
    p.leaf_mask.resize(b * l, NEG);
    p.goal_ids.resize(b * g, PAD as i64);
    p.goal_mask.resize(b * g, NEG);
    p.goal_pos.resize(b * g * positions, 0.0);

    let mut oov_offset = 0u32;
    for (k, s) in states.iter().enumerate() {
        let base = k * v;
        let remap = |id: u32| -> i64 { if id >= text_vocab { (text_vocab + oov_offset + (id - text_vocab)) as i64 } else { id as i64 } };
        let has_goal = !s.goal.is_empty();
        for i in 0..s.num_nodes() {
            let row = base + i;
            p.tags[row] = s.tags[i] as i64;
            p.classes[row] = s.classes[i] as i64;
            p.texts[row] = remap(s.texts[i]);
            p.focused[row] = (s.flags[i] & FOCUSED != 0) as u8 as f32;
            p.tampered[row] = (s.flags[i] & TAMPERED != 0) as u8 as f32;
            p.text_valid[row] = (has_goal && s.texts[i] != PAD) as u8 as f32;
            p.node_mask[row] = 0.0;
            if s.parents[i] != NO_PARENT {
                let parent = (base + s.parents[i] as usize) as i64;
                p.edge_src.extend([parent, row as i64]);
                p.edge_dst.extend([row as i64, parent]);
            }
        }
        for (j, &leaf) in s.leaves.iter().enumerate() {
            p.leaf_rows[k * l + j] = (base + leaf as usize) as i64;
            p.leaf_mask[k * l + j] = 0.0;
        }
        for j in 0..l {
            if j >= s.leaves.len() {
                p.leaf_rows[k * l + j] = base as i64;
            }
        }
        for (j, &t) in s.goal.iter().enumerate() {
            p.goal_ids[k * g + j] = remap(t);
            p.goal_mask[k * g + j] = 0.0;
            if j < positions {
                p.goal_pos[(k * g + j) * positions + j] = 1.0;
            }
        }
        oov_offset += s.n_oov as u32;
    }
    p.n_oov = oov_offset as usize;
    p.oov_vectors = (0..p.n_oov * cfg.text_dim).map(|_| rng.normal() as f32).collect();
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_two_states_with_padding_and_edges() {
        let cfg = DqnConfig { text_vocab: 10, ..DqnConfig::default() };
        let a = StateFeatures {
            tags: vec![2, 3, 3],
            classes: vec![1, 1, 1],
            texts: vec![PAD, 5, 10], // node 2 is OOV slot 0
            flags: vec![0, FOCUSED, TAMPERED],
            parents: vec![NO_PARENT, 0, 0],
            leaves: vec![1, 2],
            goal: vec![10],
            n_oov: 1,
        };
        let b = StateFeatures {
            tags: vec![2],
            classes: vec![1],
            texts: vec![10],
            flags: vec![0],
            parents: vec![NO_PARENT],
            leaves: vec![0],
            goal: vec![],
            n_oov: 1,
        };
        let p = pack(&[&a, &b], &cfg, &mut Rng::new(0));
        assert_eq!(p.oov_vectors.len(), 2 * cfg.text_dim);
        assert_eq!((p.b, p.v, p.l, p.g, p.n_oov), (2, 3, 2, 1, 2));
        assert_eq!(p.texts, [PAD as i64, 5, 10, 11, PAD as i64, PAD as i64], "b's OOV slot follows a's");
        assert_eq!(p.goal_ids, [10, PAD as i64]);
        assert_eq!(p.node_mask, [0.0, 0.0, 0.0, 0.0, NEG, NEG]);
        assert_eq!(p.edge_src, [0, 1, 0, 2]);
        assert_eq!(p.edge_dst, [1, 0, 2, 0]);
        assert_eq!(p.leaf_rows, [1, 2, 3, 3]);
        assert_eq!(p.leaf_mask, [0.0, 0.0, 0.0, NEG]);
        assert_eq!(p.text_valid, [0.0, 1.0, 1.0, 0.0, 0.0, 0.0], "b has no goal: no alignment");
        assert_eq!((p.focused[1], p.tampered[2]), (1.0, 1.0));
        assert_eq!(p.goal_pos[0], 1.0);
    }
}
