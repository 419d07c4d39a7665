//! Mean embeddings of groups of tokens ("embedding bags") as one burn operation on the CPU
//! backend, forward and backward by hand.
//!
//! Why: through the tensor API a bag mean is seven operations forward (three uploads, a row
//! select, a zero tensor, a scatter-add, a division) and their backward nodes, called twice per
//! navigator forward (elements' attributes, fields' keys); at the navigator's sizes each costs its
//! fixed dispatch and autodiff overhead, not its arithmetic (`docs/benchmarks-code.md` §2c).
//! The arithmetic is the same as that path's, in the same order: each group's rows summed in
//! token order, then divided by the group's count.

use std::sync::Arc;

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor};
use burn::prelude::*;

use super::{flex_tensor, flex_values};

/// Which table row each token reads and which group it adds to; `counts[g]` divides group g.
#[derive(Debug)]
pub struct Bags {
    pub tokens: Vec<usize>,
    pub groups: Vec<usize>,
    pub counts: Vec<f32>,
}

#[backend_extension(Flex, Autodiff)]
pub trait BagOps: Backend {
    /// table [v, d] → [groups, d], each group's mean row.
    fn embedding_bag_mean(table: FloatTensor<Self>, bags: Arc<Bags>) -> FloatTensor<Self>;
}

/// The bag means of `table`'s rows ([v, d] → [bags.counts.len(), d]). Only for devices where
/// [`super::fused_ops`] holds.
pub fn bag_means(table: Tensor<2>, bags: Bags) -> Tensor<2> {
    Tensor::from_dispatch(<Dispatch as BagOps>::embedding_bag_mean(table.into_dispatch(), Arc::new(bags)))
}

fn forward(table: &FlexTensor, bags: &Bags) -> FlexTensor {
    let [v, d] = table.layout().shape().dims::<2>();
    let contiguous;
    let rows: &[f32] = match table.as_slice::<f32>() {
        Some(rows) => rows,
        None => {
            contiguous = table.to_contiguous();
            contiguous.as_slice::<f32>().expect("an f32 table")
        }
    };
    let n = bags.counts.len();
    let mut out = vec![0f32; n * d];
    for (&t, &g) in bags.tokens.iter().zip(&bags.groups) {
        assert!(t < v && g < n, "token {t} of {v}, group {g} of {n}");
        for (o, &x) in out[g * d..(g + 1) * d].iter_mut().zip(&rows[t * d..(t + 1) * d]) {
            *o += x;
        }
    }
    for (row, &c) in out.chunks_exact_mut(d.max(1)).zip(&bags.counts) {
        for o in row {
            *o /= c;
        }
    }
    flex_tensor(out, [n, d])
}

impl BagOps for Flex {
    fn embedding_bag_mean(table: FlexTensor, bags: Arc<Bags>) -> FlexTensor {
        forward(&table, &bags)
    }
}

#[derive(Debug)]
struct BagBackward;

impl Backward<Flex, 1> for BagBackward {
    /// The bags and the table's shape.
    type State = (Arc<Bags>, [usize; 2]);

    fn backward(self, ops: Ops<Self::State, 1>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [table_node] = ops.parents;
        let d_out = flex_values(grads.consume::<Flex>(&ops.node));
        let Some(node) = table_node else { return };
        let (bags, [v, d]) = ops.state;
        // mean = sum / count: d_sum = d_out / count, and each token's row gets its group's d_sum.
        let mut d_sum = d_out;
        for (row, &c) in d_sum.chunks_exact_mut(d.max(1)).zip(&bags.counts) {
            for x in row {
                *x /= c;
            }
        }
        let mut d_table = vec![0f32; v * d];
        for (&t, &g) in bags.tokens.iter().zip(&bags.groups) {
            for (o, &x) in d_table[t * d..(t + 1) * d].iter_mut().zip(&d_sum[g * d..(g + 1) * d]) {
                *o += x;
            }
        }
        grads.register::<Flex>(node.id, flex_tensor(d_table, [v, d]));
    }
}

impl<C: CheckpointStrategy> BagOps for Autodiff<Flex, C> {
    fn embedding_bag_mean(table: FloatTensor<Self>, bags: Arc<Bags>) -> FloatTensor<Self> {
        let (table, node) = table.into_parts();
        match BagBackward.prepare::<C>([node]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let out = forward(&table, &bags);
                let shape = table.layout().shape().dims::<2>();
                prep.finish((bags, shape), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(forward(&table, &bags)),
        }
    }
}
