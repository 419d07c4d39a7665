//! Packs several states into padded host arrays for one forward pass. Pure Rust: the model turns
//! these into tensors on whatever device it runs on.
//!
//! Nodes of state `k` occupy rows `k*v .. k*v + n_k` of the flat node arrays (`v` = most nodes in
//! the batch); padding rows have `<pad>` ids and are masked. Masks are additive (0 or
//! [`NEG`]) so they broadcast in plain float arithmetic on every backend.
//!
//! The costly parts (the graph network, the DOM stream) run on the real nodes and leaves only,
//! packed without padding ("compact" rows): pages in a batch differ in size (2–5 buttons, or
//! several tasks at once), and padding to the largest would spend most of the work on nothing.

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
    /// Each node's place among its siblings, one-hot, [b*v*sibling_positions] (empty when the
    /// config's `sibling_positions` is 0).
    pub sibling: Vec<f32>,
    /// 1 where the node has text and its state has goal tokens (the alignment is defined).
    pub text_valid: Vec<f32>,
    /// Additive node mask, [b*v].
    pub node_mask: Vec<f32>,
    /// Padded row of each real node, in order: compact node `c` is padded row `node_rows[c]`.
    pub node_rows: Vec<i64>,
    /// Compact node of each padded row, or the number of real nodes (a zero row) for padding.
    pub pad_to_node: Vec<i64>,
    /// Directed edges (both directions of every tree edge), as compact node indices.
    pub edge_src: Vec<i64>,
    pub edge_dst: Vec<i64>,
    /// Compact node of each real leaf, in state order, and the state it belongs to.
    pub leaf_nodes: Vec<i64>,
    pub leaf_state: Vec<i64>,
    /// Real leaf of each leaf slot, [b*l], or the number of real leaves (a zero row) for padding.
    pub leaf_slots: Vec<i64>,
    pub leaf_mask: Vec<f32>,
    pub goal_ids: Vec<i64>,
    pub goal_mask: Vec<f32>,
    /// The state of each goal slot, [b*g].
    pub goal_state: Vec<i64>,
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
    let siblings = cfg.sibling_positions;
    let mut p = Packed { b, v, l, g, positions, ..Default::default() };
    p.tags.resize(b * v, PAD as i64);
    p.classes.resize(b * v, PAD as i64);
    p.texts.resize(b * v, PAD as i64);
    p.focused.resize(b * v, 0.0);
    p.tampered.resize(b * v, 0.0);
    p.sibling.resize(b * v * siblings, 0.0);
    p.text_valid.resize(b * v, 0.0);
    p.node_mask.resize(b * v, NEG);
    p.pad_to_node.resize(b * v, -1);
    p.leaf_slots.resize(b * l, -1);
    p.leaf_mask.resize(b * l, NEG);
    p.goal_ids.resize(b * g, PAD as i64);
    p.goal_mask.resize(b * g, NEG);
    p.goal_pos.resize(b * g * positions, 0.0);

    let mut oov_offset = 0u32;
    for (k, s) in states.iter().enumerate() {
        let base = k * v;
        let first_node = p.node_rows.len();
        let remap = |id: u32| -> i64 { if id >= text_vocab { (text_vocab + oov_offset + (id - text_vocab)) as i64 } else { id as i64 } };
        let has_goal = !s.goal.is_empty();
        // Children seen so far per parent: parents come before their children, in page order.
        let mut seen: std::collections::HashMap<u16, usize> = std::collections::HashMap::new();
        for i in 0..s.num_nodes() {
            let row = base + i;
            if siblings > 0 {
                let place = seen.entry(s.parents[i]).or_insert(0);
                p.sibling[row * siblings + (*place).min(siblings - 1)] = 1.0;
                *place += 1;
            }
            p.tags[row] = s.tags[i] as i64;
            p.classes[row] = s.classes[i] as i64;
            p.texts[row] = remap(s.texts[i]);
            p.focused[row] = (s.flags[i] & FOCUSED != 0) as u8 as f32;
            p.tampered[row] = (s.flags[i] & TAMPERED != 0) as u8 as f32;
            p.text_valid[row] = (has_goal && s.texts[i] != PAD) as u8 as f32;
            p.node_mask[row] = 0.0;
            let node = (first_node + i) as i64;
            p.pad_to_node[row] = node;
            p.node_rows.push(row as i64);
            if s.parents[i] != NO_PARENT {
                let parent = (first_node + s.parents[i] as usize) as i64;
                p.edge_src.extend([parent, node]);
                p.edge_dst.extend([node, parent]);
            }
        }
        for (j, &leaf) in s.leaves.iter().enumerate() {
            p.leaf_slots[k * l + j] = p.leaf_nodes.len() as i64;
            p.leaf_nodes.push((first_node + leaf as usize) as i64);
            p.leaf_state.push(k as i64);
            p.leaf_mask[k * l + j] = 0.0;
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
    // Padding points past the real rows, at a zero row the model appends.
    let (nodes, leaves) = (p.node_rows.len() as i64, p.leaf_nodes.len() as i64);
    p.pad_to_node.iter_mut().filter(|x| **x < 0).for_each(|x| *x = nodes);
    p.leaf_slots.iter_mut().filter(|x| **x < 0).for_each(|x| *x = leaves);
    p.goal_state = (0..b * g).map(|i| (i / g) as i64).collect();
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
        assert_eq!(p.node_rows, [0, 1, 2, 3], "a's three nodes, then b's one (rows 4, 5 are padding)");
        assert_eq!(p.pad_to_node, [0, 1, 2, 3, 4, 4], "padding points at the zero row after the 4 real nodes");
        assert_eq!(p.edge_src, [0, 1, 0, 2]);
        assert_eq!(p.edge_dst, [1, 0, 2, 0]);
        assert_eq!(p.leaf_nodes, [1, 2, 3]);
        assert_eq!(p.leaf_state, [0, 0, 1]);
        assert_eq!(p.leaf_slots, [0, 1, 2, 3], "b's second slot is padding: the zero row after 3 leaves");
        assert_eq!(p.leaf_mask, [0.0, 0.0, 0.0, NEG]);
        assert_eq!(p.goal_state, [0, 1]);
        assert_eq!(p.text_valid, [0.0, 1.0, 1.0, 0.0, 0.0, 0.0], "b has no goal: no alignment");
        assert_eq!((p.focused[1], p.tampered[2]), (1.0, 1.0));
        assert_eq!(p.goal_pos[0], 1.0);
    }
}
