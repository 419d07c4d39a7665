//! The second core for one learner: work that splits into two independent halves runs them side
//! by side. Natively the caller runs one half and a single helper thread the other ([`join`]); in
//! the browser's worker, which has no threads, nothing is split. Whether a piece of work is split
//! depends only on the work, never on how many cores there are, so a seed gives the same run on
//! any machine.
//!
//! Two uses: acting (the forward pass over a batch of states, split by state: a state's choice
//! depends only on itself, the weights and its own generator, so this is exact) and the A2C
//! update ([`halves_gradients`]: a loss that is a mean over steps is the step-weighted sum of its
//! halves' losses, so the gradient is the sum of the halves' gradients — summed in another order
//! than one pass, so equal within float rounding, not bit for bit).

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;

/// Whether this build splits work at all: natively, on the CPU backend. (WebGPU queues its
/// work on one device; the browser's worker has no threads.)
pub fn splits(device: &Device) -> bool {
    cfg!(not(target_family = "wasm")) && super::fused_ops(device)
}

#[cfg(not(target_family = "wasm"))]
thread_local! {
    /// Set on threads that already have a core each ([`alone`]).
    static ALONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with this thread's halves taken one after the other, for threads that already have
/// a core each (a population's navigators played side by side): the same work, so the same
/// results, without queueing for the one helper thread.
pub fn alone<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(not(target_family = "wasm"))]
    {
        let before = ALONE.with(|a| a.replace(true));
        let out = f();
        ALONE.with(|a| a.set(before));
        out
    }
    #[cfg(target_family = "wasm")]
    f()
}

/// Runs `a` and `b`, side by side where there are threads: `a` on the calling thread, `b` on the
/// one helper thread (so two threads in all, one per core of a 2-core machine; rayon's global
/// pool would add a thread per core beside the caller, and they take turns with it).
pub fn join<A: Send, B: Send>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B + Send) -> (A, B) {
    #[cfg(not(target_family = "wasm"))]
    if !ALONE.with(|a| a.get()) {
        static HELPER: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
        let helper = HELPER.get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(1).thread_name(|_| "weblab-shard".into()).build().ok());
        if let Some(helper) = helper {
            let mut out_b = None;
            let out_a = helper.in_place_scope(|s| {
                s.spawn(|_| out_b = Some(b()));
                a()
            });
            return (out_a, out_b.expect("the helper ran its half"));
        }
    }
    (a(), b())
}

/// The index that splits items of these `sizes` into two runs of most nearly equal total size
/// (each non-empty; the first such index on ties). `None` for fewer than two items.
pub fn balanced_split(sizes: &[usize]) -> Option<usize> {
    if sizes.len() < 2 {
        return None;
    }
    let total: usize = sizes.iter().sum();
    let mut before = 0;
    let mut best = (usize::MAX, 1);
    for (k, &s) in sizes.iter().enumerate().take(sizes.len() - 1) {
        before += s;
        let gap = before.abs_diff(total - before);
        if gap < best.0 {
            best = (gap, k + 1);
        }
    }
    Some(best.1)
}

/// Gradients of a loss taken in two halves: `loss(model, half)` gives a half's part of the whole
/// loss (already weighted, so the parts add up to it) and what else the caller wants from that
/// half. Each half runs forward and backward on its own copy of the parameters (same ids, fresh
/// autodiff leaves, so the two graphs share nothing and neither waits on the other's lock); the
/// gradients come back summed per parameter, as one backward pass of the whole would give them.
pub fn halves_gradients<M, H, O, F>(model: &M, halves: [H; 2], loss: F) -> (GradientsParams, [O; 2])
where
    M: Module + Sync,
    H: Send,
    O: Send,
    F: Fn(&M, H) -> (Tensor<1>, O) + Sync,
{
    let run = |half: H| {
        let copy = model.clone().map(&mut FreshLeaves);
        let (part, out) = loss(&copy, half);
        (GradientsParams::from_grads(part.backward(), &copy), out)
    };
    let [a, b] = halves;
    let ((mut ga, oa), (mut gb, ob)) = join(|| run(a), || run(b));
    model.visit(&mut AddInto { into: &mut ga, from: &mut gb });
    (ga, [oa, ob])
}

/// The same parameters (ids and values) as new autodiff leaves.
struct FreshLeaves;

impl ModuleMapper for FreshLeaves {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper) = param.consume();
        let fresh = if tensor.is_require_grad() { tensor.detach().require_grad() } else { tensor.detach() };
        Param::from_mapped_value(id, fresh, mapper)
    }
}

/// Adds `from`'s gradient of each parameter to `into`'s.
struct AddInto<'a> {
    into: &'a mut GradientsParams,
    from: &'a mut GradientsParams,
}

impl ModuleVisitor for AddInto<'_> {
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        let Some(b) = self.from.remove::<D>(p.id) else { return };
        let sum = match self.into.remove::<D>(p.id) {
            Some(a) => a + b,
            None => b,
        };
        self.into.register::<D>(p.id, sum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_balances_the_halves() {
        assert_eq!(balanced_split(&[]), None);
        assert_eq!(balanced_split(&[7]), None);
        assert_eq!(balanced_split(&[3, 3]), Some(1));
        assert_eq!(balanced_split(&[1, 1, 1, 9]), Some(3));
        assert_eq!(balanced_split(&[9, 1, 1, 1]), Some(1));
        assert_eq!(balanced_split(&[2, 2, 2, 2, 2]), Some(2), "the first of two equally good splits");
        assert_eq!(balanced_split(&[0, 0, 5]), Some(1), "a half may hold no steps: callers check");
    }

    /// Two halves' weighted losses give, summed, the gradients of the whole loss.
    #[test]
    fn the_halves_gradients_are_the_wholes() {
        use burn::nn::{Linear, LinearConfig};
        let device = Device::flex().autodiff();
        let layer: Linear = crate::learn::init::seeded(&device, 3, |d| LinearConfig::new(4, 3).init(d));
        let rows: Vec<f32> = (0..24).map(|i| ((i * 7 % 11) as f32 - 5.0) / 3.0).collect();
        let input = |from: usize, to: usize| Tensor::<2>::from_data(TensorData::new(rows[from * 4..to * 4].to_vec(), [to - from, 4]), &device);
        let loss = |m: &Linear, (from, to): (usize, usize)| m.forward(input(from, to)).tanh().square().sum().div_scalar(6.0);
        let flat = |g: &GradientsParams| -> Vec<f32> {
            let w = g.get::<2>(layer.weight.id).unwrap().into_data().try_to_vec::<f32>().unwrap();
            let b = g.get::<1>(layer.bias.as_ref().unwrap().id).unwrap().into_data().try_to_vec::<f32>().unwrap();
            [w, b].concat()
        };
        let whole = GradientsParams::from_grads(loss(&layer, (0, 6)).backward(), &layer);
        let (halves, outs) = halves_gradients(&layer, [(0, 2), (2, 6)], |m, h| (loss(m, h), h.1 - h.0));
        assert_eq!(outs, [2, 4], "each half's own output, in order");
        let (w, h) = (flat(&whole), flat(&halves));
        assert!(w.iter().any(|x| x.abs() > 1e-3), "a gradient to compare");
        for (i, (a, b)) in w.iter().zip(&h).enumerate() {
            assert!((a - b).abs() < 1e-6, "gradient {i}: {a} whole, {b} by halves");
        }
        // The model's own parameters were not replaced, and its gradients can still be taken.
        assert!(layer.weight.val().is_require_grad());
    }
}
