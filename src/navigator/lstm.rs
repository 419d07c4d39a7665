//! The navigator's element LSTM: a forward pass over the elements in ref order, over padded
//! states (`forward`) or packed ones (`forward_packed`, the one the network uses: a batch costs
//! its elements, not its states times the longest).

use burn::module::Param;
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::{sigmoid, tanh};

use super::features::ELEMENT_FEATURES;
use super::padded::Padded;
use crate::learn::{fused_ops, lstm_op};

/// A standard LSTM (Hochreiter & Schmidhuber; gates i, f, g, o) that projects every element's
/// input in one product before stepping, so each step is one small product with the state.
#[derive(Module, Debug)]
pub struct ElementLstm {
    pub(super) w_x: Linear,
    pub(super) w_h: Linear,
    hidden: usize,
}

impl ElementLstm {
    pub(super) fn new(d_in: usize, hidden: usize, device: &Device) -> Self {
        let w_x = LinearConfig::new(d_in, 4 * hidden).init(device);
        // Forget-gate bias 1 (Jozefowicz et al., 2015), so early steps keep their memory.
        let mut bias = vec![0.0f32; 4 * hidden];
        bias[hidden..2 * hidden].fill(1.0);
        let w_x = Linear { bias: Some(Param::from_tensor(Tensor::from_data(TensorData::new(bias, [4 * hidden]), device))), ..w_x };
        let w_h = LinearConfig::new(hidden, 4 * hidden).with_bias(false).init(device);
        ElementLstm { w_x, w_h, hidden }
    }

    /// [b, n, d_in] → [b, n, hidden], every state over all n steps: the dense reference the
    /// packed pass is tested against.
    #[cfg(test)]
    pub(super) fn forward(&self, x: Tensor<3>) -> Tensor<3> {
        let [b, n, d_in] = x.dims();
        let h_dim = self.hidden;
        let xw = self.w_x.forward(x.reshape([b * n, d_in])).reshape([b, n, 4 * h_dim]);
        let dev = xw.device();
        let mut h = Tensor::<2>::zeros([b, h_dim], &dev);
        let mut c = Tensor::<2>::zeros([b, h_dim], &dev);
        let mut out = Vec::with_capacity(n);
        for t in 0..n {
            let gates = xw.clone().slice([0..b, t..t + 1, 0..4 * h_dim]).reshape([b, 4 * h_dim]) + self.w_h.forward(h);
            (h, c) = Self::cell(gates, c);
            out.push(h.clone());
        }
        Tensor::stack(out, 1)
    }

    /// One step's gates [rows, 4·hidden] and cell state → the new (h, c).
    fn cell(gates: Tensor<2>, c: Tensor<2>) -> (Tensor<2>, Tensor<2>) {
        let g = gates.chunk(4, 1);
        let (i, f, cand, o) = (sigmoid(g[0].clone()), sigmoid(g[1].clone()), tanh(g[2].clone()), sigmoid(g[3].clone()));
        let c = f * c + i * cand;
        (o * tanh(c.clone()), c)
    }

    /// The LSTM over each state's own elements only, as packed sequences: states longest first,
    /// step t updates just the states with more than t elements, so a batch costs its elements,
    /// not b × its longest state (a batch mixes sites of 5 and 76 elements). The input of an
    /// element is its distinct encoding `enc` ([distinct, latent]; `p`'s rows) beside its
    /// features; the input product is taken once per distinct element and each step selects its
    /// rows, so no step slices a tensor of the whole batch (whose gradient would be a zero tensor
    /// of that size per step). `reverse`: each state read from its last element (the BiLSTM's
    /// backward direction), outputs put back at their elements. [b, e, hidden], zero past a
    /// state's own elements (those choices are closed).
    pub(super) fn forward_packed(&self, enc: Tensor<2>, p: &Padded, reverse: bool) -> Tensor<3> {
        if fused_ops(&enc.device()) { self.forward_fused(enc, p, reverse) } else { self.forward_stepped(enc, p, reverse) }
    }

    /// `forward_packed` on the CPU backend: the input gates of every (state, element) in one
    /// product, the recurrence as one operation ([`lstm_op`]), the hidden states put back at
    /// their elements with one select.
    pub(super) fn forward_fused(&self, enc: Tensor<2>, p: &Padded, reverse: bool) -> Tensor<3> {
        let (b, e, h_dim) = (p.b, p.e, self.hidden);
        let l = enc.dims()[1];
        let dev = enc.device();
        let plain = dev.clone().without_autodiff();
        let mut order: Vec<usize> = (0..b).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(p.lens[s]));
        let steps = order.first().map_or(0, |&s| p.lens[s]);
        let (mut live, mut rows, mut feats, mut slot) = (Vec::with_capacity(steps), vec![], vec![], vec![]);
        for t in 0..steps {
            let n = order.iter().take_while(|&&s| p.lens[s] > t).count();
            live.push(n);
            for &s in &order[..n] {
                let at = s * e + if reverse { p.lens[s] - 1 - t } else { t };
                rows.push(p.el_rows[at]);
                feats.extend_from_slice(&p.features[at * ELEMENT_FEATURES..(at + 1) * ELEMENT_FEATURES]);
                slot.push(at);
            }
        }
        let n = rows.len();
        if n == 0 {
            return Tensor::zeros([b, e, h_dim], &dev);
        }
        let w = self.w_x.weight.val(); // [latent + features, 4·hidden]
        let mut gx = enc.matmul(w.clone().slice([0..l, 0..4 * h_dim])).select(0, Tensor::<1, Int>::from_data(TensorData::new(rows, [n]), &plain));
        gx = gx
            + Tensor::<2>::from_data(TensorData::new(feats, [n, ELEMENT_FEATURES]), &plain).matmul(w.slice([l..l + ELEMENT_FEATURES, 0..4 * h_dim]));
        if let Some(bias) = &self.w_x.bias {
            gx = gx + bias.val().reshape([1, 4 * h_dim]);
        }
        let hs = lstm_op::recurrence(gx, self.w_h.weight.val(), live);
        // Each slot's packed row; slots past a state's elements read an appended zero row.
        let mut at = vec![n as i64; b * e];
        for (r, &s) in slot.iter().enumerate() {
            at[s] = r as i64;
        }
        let at = Tensor::<1, Int>::from_data(TensorData::new(at, [b * e]), &plain);
        Tensor::cat(vec![hs, Tensor::zeros([1, h_dim], &dev)], 0).select(0, at).reshape([b, e, h_dim])
    }

    /// `forward_packed` through the tensor API one step at a time (the WebGPU backend's path,
    /// and the reference the fused one is tested against).
    pub(super) fn forward_stepped(&self, enc: Tensor<2>, p: &Padded, reverse: bool) -> Tensor<3> {
        let (b, e, h_dim) = (p.b, p.e, self.hidden);
        let l = enc.dims()[1];
        let dev = enc.device();
        let plain = dev.clone().without_autodiff();
        let w = self.w_x.weight.val(); // [latent + features, 4·hidden]
        let w_feat = w.clone().slice([l..l + ELEMENT_FEATURES, 0..4 * h_dim]);
        let mut projected = enc.matmul(w.slice([0..l, 0..4 * h_dim]));
        if let Some(bias) = &self.w_x.bias {
            projected = projected + bias.val().reshape([1, 4 * h_dim]);
        }
        let mut order: Vec<usize> = (0..b).collect();
        order.sort_by_key(|&s| std::cmp::Reverse(p.lens[s]));
        let live0 = order.iter().filter(|&&s| p.lens[s] > 0).count();
        let mut h = Tensor::<2>::zeros([live0, h_dim], &dev);
        let mut c = Tensor::<2>::zeros([live0, h_dim], &dev);
        let mut out = Vec::with_capacity(e);
        for t in 0..e {
            let live = order.iter().take_while(|&&s| p.lens[s] > t).count();
            if live == 0 {
                out.push(Tensor::<2>::zeros([b, h_dim], &dev));
                continue;
            }
            if live < h.dims()[0] {
                h = h.slice([0..live, 0..h_dim]);
                c = c.slice([0..live, 0..h_dim]);
            }
            let mut rows = Vec::with_capacity(live);
            let mut feats = Vec::with_capacity(live * ELEMENT_FEATURES);
            for &s in &order[..live] {
                let at = s * e + if reverse { p.lens[s] - 1 - t } else { t };
                rows.push(p.el_rows[at]);
                feats.extend_from_slice(&p.features[at * ELEMENT_FEATURES..(at + 1) * ELEMENT_FEATURES]);
            }
            let rows = Tensor::<1, Int>::from_data(TensorData::new(rows, [live]), &plain);
            let feats = Tensor::<2>::from_data(TensorData::new(feats, [live, ELEMENT_FEATURES]), &plain);
            let gates = projected.clone().select(0, rows) + feats.matmul(w_feat.clone()) + self.w_h.forward(h);
            (h, c) = Self::cell(gates, c);
            out.push(if live < b { Tensor::cat(vec![h.clone(), Tensor::zeros([b - live, h_dim], &dev)], 0) } else { h.clone() });
        }
        let sorted = Tensor::stack(out, 1); // row k is state order[k]
        let unsorted = if order.iter().enumerate().all(|(k, &s)| k == s) {
            sorted
        } else {
            let mut at = vec![0i64; b];
            for (k, &s) in order.iter().enumerate() {
                at[s] = k as i64;
            }
            sorted.select(0, Tensor::<1, Int>::from_data(TensorData::new(at, [b]), &plain))
        };
        if reverse { reverse_within(unsorted, &p.lens) } else { unsorted }
    }
}

/// Reverses each state's first `lens[b]` rows of a [b, e, d] tensor, leaving its padding where
/// it is: a backward LSTM run forward over the result reads each state from its own last
/// element, never from padding. Its own inverse.
pub(super) fn reverse_within(x: Tensor<3>, lens: &[usize]) -> Tensor<3> {
    let [b, e, d] = x.dims();
    let idx: Vec<i64> = (0..b).flat_map(|bi| (0..e).map(move |t| (bi * e + if t < lens[bi] { lens[bi] - 1 - t } else { t }) as i64)).collect();
    let plain = x.device().without_autodiff();
    let idx = Tensor::<1, Int>::from_data(TensorData::new(idx, [b * e]), &plain);
    x.reshape([b * e, d]).select(0, idx).reshape([b, e, d])
}
