//! What the learning agents share: the [`Agent`] interface the learner worker drives, their
//! counters, Adam with its moments kept for snapshots, gradient clipping, vocabularies grown online with caps, the
//! checkpoint container, the operations fused on the CPU backend (`lstm_op`, `embedding_bag`), and
//! the second core for one learner (`shards`).

pub mod adam;
pub mod checkpoint;
pub mod clip;
pub mod embedding_bag;
pub mod failures;
pub mod init;
pub mod lstm_op;
pub mod shards;
pub mod vocab;

use burn::backend::flex::FlexTensor;
use burn::prelude::{Device, TensorData};
use serde::{Deserialize, Serialize};

use checkpoint::Precision;

/// Whether tensors on `device` can take the fused operations (`lstm_op`, `embedding_bag`): the
/// CPU backend, with or without autodiff. Elsewhere (WebGPU) callers use the tensor API.
pub fn fused_ops(device: &Device) -> bool {
    *device == Device::flex()
}

/// A CPU tensor's values, as the fused operations read them.
fn flex_values(t: FlexTensor) -> Vec<f32> {
    t.into_data().convert::<f32>().try_into_vec::<f32>().expect("f32 values")
}

/// A row-major [rows, cols] CPU tensor of `v`.
fn flex_tensor(v: Vec<f32>, shape: [usize; 2]) -> FlexTensor {
    FlexTensor::from_data(TensorData::new(v, shape))
}

/// How far an agent has come: environment steps, updates, finished episodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub env_steps: u64,
    pub updates: u64,
    pub episodes: u64,
}

/// What the learner worker needs of any agent besides its own training loop: counters, a
/// checkpoint in the agent's own format, and Adam's moments for snapshots that resume exactly.
#[allow(async_fn_in_trait)]
pub trait Agent {
    /// "DOM-Q-Net", "navigator".
    fn kind(&self) -> &'static str;
    fn counters(&self) -> Counters;
    /// The agent as a checkpoint file; `trained_on` names what it trained on.
    async fn checkpoint(&self, trained_on: &[String], precision: Precision) -> Result<Vec<u8>, String>;
    /// Adam's moments, `None` before the first update.
    async fn optimizer_state(&self) -> Result<Option<Vec<u8>>, String>;
    /// Continues with moments saved by [`Agent::optimizer_state`]; a damaged record or one of
    /// another network is refused and the optimizer stays as it was.
    fn load_optimizer_state(&mut self, bytes: &[u8]) -> Result<(), String>;
}
