//! An LSTM's recurrence as one burn operation (a backend extension), forward and backward
//! written out by hand, for the CPU backend (flex).
//!
//! Why: stepped through burn's tensor API, every element of every state costs about twenty
//! small operations forward (select, two products, five gate activations, the state update) and
//! as many backward, each with a fixed dispatch and autodiff cost that dwarfs its arithmetic at
//! the navigator's sizes (50 units; `docs/benchmarks-code.md` §2b measured the per-operation
//! cost as what is left). Here the input projections of all steps arrive as one tensor and the
//! whole recurrence is one node of the graph.
//!
//! Layout: sequences are packed step-major and sorted longest first, so step t holds `live[t]`
//! rows (non-increasing) and row k of step t continues row k of step t − 1. `gx` is [n, 4h], the
//! input projections (bias included) of every row in that order, gates i, f, g, o as
//! `ElementLstm`; `w_h` is [h, 4h] (burn's `Linear` layout: gates += h_prev · w_h). The output
//! is [n, h], each row's hidden state.

use std::sync::Arc;

use burn::backend::autodiff::checkpoint::base::Checkpointer;
use burn::backend::autodiff::checkpoint::strategy::CheckpointStrategy;
use burn::backend::autodiff::grads::Gradients;
use burn::backend::autodiff::ops::{Backward, Ops, OpsKind};
use burn::backend::flex::FlexTensor;
use burn::backend::{Autodiff, Backend, Dispatch, Flex, backend_extension, tensor::FloatTensor};
use burn::prelude::*;

use super::{flex_tensor as tensor, flex_values as values};

#[backend_extension(Flex, Autodiff)]
pub trait LstmOps: Backend {
    /// gx [n, 4h], w_h [h, 4h], rows per step → hidden states [n, h].
    fn lstm_recurrence(gx: FloatTensor<Self>, w_h: FloatTensor<Self>, live: Vec<usize>) -> FloatTensor<Self>;
}

/// The recurrence over packed rows (module doc): [n, 4h], [h, 4h] → [n, h]. Only for devices
/// where [`super::fused_ops`] holds.
pub fn recurrence(gx: Tensor<2>, w_h: Tensor<2>, live: Vec<usize>) -> Tensor<2> {
    Tensor::from_dispatch(<Dispatch as LstmOps>::lstm_recurrence(gx.into_dispatch(), w_h.into_dispatch(), live))
}

/// e^x without a call, so the gate loops vectorise (libm's `expf`, one call per value, was 6 %
/// of a training loop's samples): x = k·ln 2 + r with |r| ≤ ln 2 / 2, e^r by Cephes' degree-6
/// polynomial for `expf`, 2^k written into the exponent bits. x is clamped to where 2^k is a
/// normal float (e^x from about 1e-38 to 2e38); within 2 ulp of libm's there (test below).
#[inline(always)]
fn exp(x: f32) -> f32 {
    // 1.5·2^23: adding it rounds to an integer, which then sits in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let j = x * std::f32::consts::LOG2_E + ROUND;
    let k = j - ROUND;
    let r = x - k * 0.693_359_4 - k * -2.121_944_4e-4;
    let mut p = 1.987_569_2e-4f32;
    for c in [1.398_2e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
        p = p * r + c;
    }
    let er = p * r * r + r + 1.0;
    // The integer k is j's bits less ROUND's; its exponent field is k + 127.
    let scale = f32::from_bits(j.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(127) << 23);
    er * scale
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// tanh through one `exp` (libm's `tanhf` was a tenth of a training loop's time): within 3e-7
/// of it everywhere (test below), the sign kept apart so large |x| cannot overflow.
fn tanh(x: f32) -> f32 {
    let e = exp(-2.0 * x.abs());
    ((1.0 - e) / (1.0 + e)).copysign(x)
}

/// A row-major matrix view: `rs` between rows, `cs` between columns (a transpose swaps them).
#[derive(Clone, Copy)]
struct View<'a> {
    v: &'a [f32],
    rs: usize,
    cs: usize,
}

/// dst [m, n] (row-major, `n` apart) += a [m, k] · b [k, n], through the `gemm` crate (the
/// matrix kernel burn's CPU backend uses, with the CPU's vector units found at run time).
fn matmul_add(dst: &mut [f32], a: View, b: View, (m, n, k): (usize, usize, usize)) {
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    // Every index the kernel reads or writes lies in the slices.
    assert!(dst.len() >= m * n);
    assert!(a.v.len() > (m - 1) * a.rs + (k - 1) * a.cs);
    assert!(b.v.len() > (k - 1) * b.rs + (n - 1) * b.cs);
    // SAFETY: the bounds above; `dst` is borrowed mutably, so it aliases neither input.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            true,
            a.v.as_ptr(),
            a.cs as isize,
            a.rs as isize,
            b.v.as_ptr(),
            b.cs as isize,
            b.rs as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// What the forward pass leaves for the backward one.
#[derive(Debug)]
struct Trace {
    h: usize,
    live: Vec<usize>,
    w: Vec<f32>,
    /// [n, 4h], each gate after its activation.
    gates: Vec<f32>,
    /// [n, h] cell states.
    c: Vec<f32>,
    /// [n, h] tanh of the cell states.
    tanh_c: Vec<f32>,
    /// [n, h] hidden states (the output).
    hs: Vec<f32>,
}

/// Where each step's rows start.
fn offsets(live: &[usize]) -> Vec<usize> {
    live.iter()
        .scan(0, |off, &rows| {
            let at = *off;
            *off += rows;
            Some(at)
        })
        .collect()
}

fn forward(mut gates: Vec<f32>, w: Vec<f32>, live: Vec<usize>) -> Trace {
    let n: usize = live.iter().sum();
    assert!(n > 0 && gates.len().is_multiple_of(4 * n), "gx is [n, 4h] with n = the rows of all steps");
    let h = gates.len() / n / 4;
    assert_eq!(w.len(), h * 4 * h, "w_h is [h, 4h]");
    assert!(live.windows(2).all(|p| p[1] <= p[0]), "steps hold non-increasing rows");
    let g4 = 4 * h;
    let (mut c, mut tanh_c, mut hs) = (vec![0f32; n * h], vec![0f32; n * h], vec![0f32; n * h]);
    let offs = offsets(&live);
    for (t, &rows) in live.iter().enumerate() {
        let off = offs[t];
        let a = &mut gates[off * g4..(off + rows) * g4];
        if t > 0 {
            let hp = View { v: &hs[offs[t - 1] * h..], rs: h, cs: 1 };
            matmul_add(a, hp, View { v: &w, rs: g4, cs: 1 }, (rows, g4, h));
        }
        for (k, a) in a.chunks_exact_mut(g4).enumerate() {
            let (r, p) = (off + k, (t > 0).then(|| offs[t - 1] + k));
            for x in &mut a[..2 * h] {
                *x = sigmoid(*x);
            }
            for x in &mut a[2 * h..3 * h] {
                *x = tanh(*x);
            }
            for x in &mut a[3 * h..] {
                *x = sigmoid(*x);
            }
            for j in 0..h {
                let cp = p.map_or(0.0, |p| c[p * h + j]);
                let cj = a[h + j] * cp + a[j] * a[2 * h + j];
                let tc = tanh(cj);
                c[r * h + j] = cj;
                tanh_c[r * h + j] = tc;
                hs[r * h + j] = a[3 * h + j] * tc;
            }
        }
    }
    Trace { h, live, w, gates, c, tanh_c, hs }
}

/// Back-propagation through the recurrence: the gradient of the outputs [n, h] → the gradients
/// of gx [n, 4h] and w_h [h, 4h].
fn backward(tr: &Trace, mut dh: Vec<f32>) -> (Vec<f32>, Vec<f32>) {
    let (h, g4) = (tr.h, 4 * tr.h);
    let n: usize = tr.live.iter().sum();
    let offs = offsets(&tr.live);
    let mut dgx = vec![0f32; n * g4];
    let mut dw = vec![0f32; h * g4];
    let mut dc = vec![0f32; n * h];
    for t in (0..tr.live.len()).rev() {
        let (off, rows) = (offs[t], tr.live[t]);
        for k in 0..rows {
            let (r, p) = (off + k, (t > 0).then(|| offs[t - 1] + k));
            let g = &tr.gates[r * g4..(r + 1) * g4];
            let da = &mut dgx[r * g4..(r + 1) * g4];
            for j in 0..h {
                let (i, f, gg, o) = (g[j], g[h + j], g[2 * h + j], g[3 * h + j]);
                let tc = tr.tanh_c[r * h + j];
                let dhj = dh[r * h + j];
                let dcj = dc[r * h + j] + dhj * o * (1.0 - tc * tc);
                let cp = p.map_or(0.0, |p| tr.c[p * h + j]);
                da[j] = dcj * gg * i * (1.0 - i);
                da[h + j] = dcj * cp * f * (1.0 - f);
                da[2 * h + j] = dcj * i * (1.0 - gg * gg);
                da[3 * h + j] = dhj * tc * o * (1.0 - o);
                if let Some(p) = p {
                    dc[p * h + j] += dcj * f;
                }
            }
        }
        if t > 0 {
            // gates += h_prev · w_h over the step's rows: dw += h_prevᵀ · da, dh_prev += da · w_hᵀ.
            let prev = offs[t - 1];
            let da = View { v: &dgx[off * g4..(off + rows) * g4], rs: g4, cs: 1 };
            let hp_t = View { v: &tr.hs[prev * h..], rs: 1, cs: h };
            matmul_add(&mut dw, hp_t, da, (h, g4, rows));
            let w_t = View { v: &tr.w, rs: 1, cs: g4 };
            matmul_add(&mut dh[prev * h..(prev + rows) * h], da, w_t, (rows, h, g4));
        }
    }
    (dgx, dw)
}

impl LstmOps for Flex {
    fn lstm_recurrence(gx: FlexTensor, w_h: FlexTensor, live: Vec<usize>) -> FlexTensor {
        let n: usize = live.iter().sum();
        let tr = forward(values(gx), values(w_h), live);
        tensor(tr.hs, [n, tr.h])
    }
}

#[derive(Debug)]
struct RecurrenceBackward;

impl Backward<Flex, 2> for RecurrenceBackward {
    type State = Arc<Trace>;

    fn backward(self, ops: Ops<Self::State, 2>, grads: &mut Gradients, _: &mut Checkpointer) {
        let [gx_node, w_node] = ops.parents;
        let dh = values(grads.consume::<Flex>(&ops.node));
        let tr = ops.state;
        let (dgx, dw) = backward(&tr, dh);
        let n = dgx.len() / (4 * tr.h);
        if let Some(node) = gx_node {
            grads.register::<Flex>(node.id, tensor(dgx, [n, 4 * tr.h]));
        }
        if let Some(node) = w_node {
            grads.register::<Flex>(node.id, tensor(dw, [tr.h, 4 * tr.h]));
        }
    }
}

impl<C: CheckpointStrategy> LstmOps for Autodiff<Flex, C> {
    fn lstm_recurrence(gx: FloatTensor<Self>, w_h: FloatTensor<Self>, live: Vec<usize>) -> FloatTensor<Self> {
        let (gx, gx_node) = gx.into_parts();
        let (w, w_node) = w_h.into_parts();
        let n: usize = live.iter().sum();
        match RecurrenceBackward.prepare::<C>([gx_node, w_node]).compute_bound().stateful() {
            OpsKind::Tracked(prep) => {
                let tr = forward(values(gx), values(w), live);
                let out = tensor(tr.hs.clone(), [n, tr.h]);
                prep.finish(Arc::new(tr), out)
            }
            OpsKind::UnTracked(prep) => prep.finish(Flex::lstm_recurrence(gx, w, live)),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_polynomial_exp_is_libms_to_within_2_ulp() {
        let mut worst = 0f32;
        for i in -870_000..=880_000 {
            let x = i as f32 * 1e-4;
            let (ours, libm) = (super::exp(x), x.exp());
            worst = worst.max((ours - libm).abs() / libm);
        }
        assert!(worst < 2.0 * f32::EPSILON, "{worst}");
        assert_eq!(super::exp(0.0), 1.0);
        assert!(super::exp(-1e30) < 1e-37 && super::exp(-1e30) >= 0.0 && super::exp(1e30) > 1e38);
        assert!(super::exp(f32::NAN).is_nan());
        assert!((super::sigmoid(-200.0)) < 1e-37 && super::sigmoid(200.0) == 1.0 && super::sigmoid(0.0) == 0.5);
    }

    #[test]
    fn the_one_exp_tanh_is_libms_to_within_3e_7() {
        let mut worst = 0f32;
        for i in -200_000..=200_000 {
            let x = i as f32 * 1e-4; // -20 … 20, through 0 and the small values
            worst = worst.max((super::tanh(x) - x.tanh()).abs());
        }
        for x in [0.0f32, -0.0, 1e-30, -1e-30, 88.0, -88.0, 1e30, -1e30, f32::INFINITY, f32::NEG_INFINITY] {
            worst = worst.max((super::tanh(x) - x.tanh()).abs());
        }
        assert!(worst < 3e-7, "{worst}");
        assert!(super::tanh(f32::NAN).is_nan());
    }
}
