//! Adam (Kingma & Ba, 2015) with elementwise gradient clamping, keeping its moments itself.
//!
//! burn's `ModuleOptimizer` saves and restores its state with synchronous reads and on burn's
//! default device; in the browser that is WebGPU, where a synchronous read aborts the instance. So
//! the learners (DOM-Q-Net, the navigator) keep Adam's moments here, reads them back with `into_data_async` (any
//! backend), and restores them on the network's own device: a training run saved to IndexedDB
//! resumes with the optimizer exactly where it was. The arithmetic is burn 0.22's `Adam` step for
//! step (same operations, same order), so training with this is training with burn's Adam.
//!
//! Saved layout: `WLADAM01` · u32 parameter count · per parameter in the network's visiting order:
//! u64 step count · u32 length (0: no state yet) · f32 first moments · f32 second moments.

use std::collections::HashMap;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::optim::GradientsParams;
use burn::prelude::*;

const MAGIC: &[u8; 8] = b"WLADAM01";

/// One parameter's moments, flattened, on the parameter's (non-autodiff) device.
#[derive(Clone)]
struct Moments {
    time: usize,
    m1: Tensor<1>,
    m2: Tensor<1>,
}

pub struct Adam {
    /// β1, β2: Kingma & Ba's defaults (burn's `AdamConfig` defaults too).
    beta_1: f32,
    beta_2: f32,
    epsilon: f32,
    /// Clamp every gradient element to ±clip before the step (`DqnConfig::grad_clip`).
    clip: Option<f32>,
    state: HashMap<ParamId, Moments>,
}

impl Adam {
    pub fn new(epsilon: f32, clip: Option<f32>) -> Self {
        Adam { beta_1: 0.9, beta_2: 0.999, epsilon, clip, state: HashMap::new() }
    }

    /// Whether no step has been taken yet (no moments to save).
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// One Adam step on every parameter of `model` that has a gradient in `grads`.
    pub fn step<M: Module>(&mut self, lr: f64, model: M, mut grads: GradientsParams) -> M {
        model.map(&mut Step { adam: self, lr, grads: &mut grads })
    }

    /// The moments, in `model`'s parameter order (see the module docs for the layout).
    pub async fn save<M: Module>(&self, model: &M) -> Result<Vec<u8>, String> {
        let params = params_of(model);
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(params.len() as u32).to_le_bytes());
        for (id, _) in params {
            let Some(m) = self.state.get(&id) else {
                out.extend_from_slice(&0u64.to_le_bytes());
                out.extend_from_slice(&0u32.to_le_bytes());
                continue;
            };
            let read = |t: Tensor<1>| async move {
                let data = t.into_data_async().await.map_err(|e| format!("reading Adam's moments failed: {e:?}"))?;
                data.try_into_vec_as::<f32>().map_err(|e| format!("unexpected moment data: {e:?}"))
            };
            let (m1, m2) = (read(m.m1.clone()).await?, read(m.m2.clone()).await?);
            out.extend_from_slice(&(m.time as u64).to_le_bytes());
            out.extend_from_slice(&(m1.len() as u32).to_le_bytes());
            for x in m1.iter().chain(&m2) {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        Ok(out)
    }

    /// Restores moments saved by [`Self::save`] for a network of `model`'s shape, on its device.
    /// Nothing changes when the bytes are damaged or belong to another network.
    pub fn load<M: Module>(&mut self, model: &M, bytes: &[u8]) -> Result<(), String> {
        let damaged = |why: &str| format!("the saved optimizer state is damaged: {why}");
        if bytes.len() < 12 || &bytes[..8] != MAGIC {
            return Err(damaged("not an optimizer state"));
        }
        let params = params_of(model);
        let n = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
        if n != params.len() {
            return Err(format!("the saved optimizer state belongs to another network ({n} parameters, this one has {})", params.len()));
        }
        let device = model.devices().into_iter().next().map(|d| d.without_autodiff()).unwrap_or_else(Device::flex);
        let mut at = 12;
        let mut take = |len: usize| -> Result<&[u8], String> {
            let s = bytes.get(at..at + len).ok_or_else(|| damaged("it ends too early"))?;
            at += len;
            Ok(s)
        };
        let mut state = HashMap::new();
        for (id, numel) in params {
            let time = u64::from_le_bytes(take(8)?.try_into().unwrap()) as usize;
            let len = u32::from_le_bytes(take(4)?.try_into().unwrap()) as usize;
            if len == 0 {
                continue;
            }
            // Bias correction takes the step count as an i32 power of β and divides by 1 − β^t.
            if time == 0 || time > i32::MAX as usize {
                return Err(damaged(&format!("a step count of {time}")));
            }
            if len != numel {
                return Err(format!("the saved optimizer state belongs to another network (a parameter of {len} values, here {numel})"));
            }
            let floats = |b: &[u8]| b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect::<Vec<f32>>();
            let m1 = floats(take(4 * len)?);
            let m2 = floats(take(4 * len)?);
            // Moments from storage: a NaN, or a negative second moment (its square root is NaN),
            // would turn every later update into NaN.
            if m1.iter().any(|x| !x.is_finite()) || m2.iter().any(|x| !x.is_finite() || *x < 0.0) {
                return Err(damaged("a moment is not a finite number (or a second moment is negative)"));
            }
            state.insert(
                id,
                Moments {
                    time,
                    m1: Tensor::from_data(TensorData::new(m1, [len]), &device),
                    m2: Tensor::from_data(TensorData::new(m2, [len]), &device),
                },
            );
        }
        if at != bytes.len() {
            return Err(damaged("trailing bytes"));
        }
        self.state = state;
        Ok(())
    }
}

/// Parameter ids and sizes in visiting order.
fn params_of<M: Module>(model: &M) -> Vec<(ParamId, usize)> {
    struct Ids(Vec<(ParamId, usize)>);
    impl ModuleVisitor for Ids {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            self.0.push((p.id, p.lazy_shape().num_elements()));
        }
    }
    let mut ids = Ids(Vec::new());
    model.visit(&mut ids);
    ids.0
}

struct Step<'a> {
    adam: &'a mut Adam,
    lr: f64,
    grads: &'a mut GradientsParams,
}

impl ModuleMapper for Step<'_> {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, tensor, mapper) = param.consume();
        let Some(grad) = self.grads.remove::<D>(id) else {
            return Param::from_mapped_value(id, tensor, mapper);
        };
        let require_grad = tensor.is_require_grad();
        let checkpointing = tensor.gradient_checkpointing_strategy();
        let shape = tensor.shape();
        let grad = match self.adam.clip {
            // As burn's value clipping: mask the elements beyond ±clip.
            Some(c) => {
                let over = grad.clone().greater_scalar(c);
                let under = grad.clone().lower_scalar(-c);
                grad.mask_fill(over, c).mask_fill(under, -c)
            }
            None => grad,
        };
        let grad = grad.reshape([-1]);
        let (b1, b2) = (self.adam.beta_1, self.adam.beta_2);
        let m = match self.adam.state.remove(&id) {
            Some(mut m) => {
                m.m1 = m.m1.mul_scalar(b1).add(grad.clone().mul_scalar(1.0 - b1));
                m.m2 = m.m2.mul_scalar(b2).add(grad.square().mul_scalar(1.0 - b2));
                m.time += 1;
                m
            }
            None => Moments { time: 1, m1: grad.clone().mul_scalar(1.0 - b1), m2: grad.square().mul_scalar(1.0 - b2) },
        };
        let time = m.time as i32;
        let bias_correction2_sqrt = (1.0 - b2.powi(time)).sqrt();
        let combined_factor = bias_correction2_sqrt / (1.0 - b1.powi(time));
        let direction = m.m1.clone().mul_scalar(combined_factor).div(m.m2.clone().sqrt().add_scalar(self.adam.epsilon * bias_correction2_sqrt));
        let delta = direction.mul_scalar(self.lr).reshape(shape);
        self.adam.state.insert(id, m);

        let mut updated = Tensor::from_inner(tensor.inner() - delta);
        if let Some(strategy) = checkpointing {
            updated = updated.with_gradient_checkpointing_strategy(strategy);
        }
        if require_grad {
            updated = updated.require_grad();
        }
        Param::from_mapped_value(id, updated, mapper)
    }
}
