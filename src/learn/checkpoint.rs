//! The checkpoint container the agents share: a magic naming the agent kind, a format version, a
//! JSON header (the agent's config, vocabulary, counters…), the weights as a burn record, and a
//! checksum — so a wrong, damaged, newer or foreign file is refused with a clear message.
//!
//! Layout: magic (8 bytes) · u32 format version · u32 header length · header (JSON) · u64 record
//! length · burn `ModuleRecord` bytes · u64 FNV-1a checksum of everything before it.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param, ParamId};
use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::{Bytes, FloatDType};

/// How a checkpoint stores its weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Precision {
    /// f32, exactly the trained weights: for continuing a run.
    Full,
    /// f16: half the size, for agents that are shipped to be watched.
    Half,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CheckpointError {
    /// Not a checkpoint of this kind; the text names the kind expected.
    NotACheckpoint(&'static str),
    UnsupportedVersion {
        found: u32,
        oldest: u32,
        newest: u32,
    },
    Corrupt(String),
    Mismatch(String),
    /// Written by a newer lab: its header holds a setting (named) this lab does not know.
    Newer(String),
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointError::NotACheckpoint(kind) => write!(f, "this file is not a weblab {kind} checkpoint"),
            CheckpointError::UnsupportedVersion { found, oldest, newest } => {
                write!(f, "this checkpoint has format version {found}; this lab reads versions {oldest} to {newest}")
            }
            CheckpointError::Corrupt(why) => write!(f, "the checkpoint is damaged: {why}"),
            CheckpointError::Mismatch(why) => write!(f, "the checkpoint does not fit this agent: {why}"),
            CheckpointError::Newer(setting) => write!(
                f,
                "this file was written by a newer version of the lab: it has a setting this version does not know (`{setting}`); open it in the lab that wrote it, or a newer one"
            ),
        }
    }
}

impl std::error::Error for CheckpointError {}

/// A checkpoint's JSON header read into `T`. The headers' configs refuse keys they do not know,
/// so a setting this lab lacks means a newer lab wrote the file ([`CheckpointError::Newer`]),
/// not that it is damaged; anything else unreadable is damage.
pub fn read_header<T: serde::de::DeserializeOwned>(header: &[u8]) -> Result<T, CheckpointError> {
    serde_json::from_slice(header).map_err(|e| match unknown_setting(&e.to_string()) {
        Some(setting) => CheckpointError::Newer(setting),
        None => CheckpointError::Corrupt(format!("unreadable header: {e}")),
    })
}

/// The key named by serde's "unknown field `key`, expected …" message.
fn unknown_setting(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    Some(rest[..rest.find('`')?].to_string())
}

/// What identifies a kind of checkpoint.
pub struct Kind {
    pub magic: &'static [u8; 8],
    /// In messages: "navigator", "DOM-Q-Net".
    pub name: &'static str,
    pub oldest: u32,
    pub newest: u32,
    /// Largest file of this kind read: larger ones are refused before anything is parsed.
    pub max_bytes: usize,
}

/// Largest agent checkpoint read (a file a person opens, or the model kept in the browser): the
/// largest network a config allows (20M parameters, `dom_q_net::config::MAX_PARAMS`, the
/// navigator's and DOMNet's caps alike) is 80 MB in f32, plus its header.
pub const MAX_CHECKPOINT_BYTES: usize = 128_000_000;
/// Largest population run read (a snapshot in the browser's store: several navigators, each
/// with its Adam moments and replay, and the adversary).
pub const MAX_RUN_BYTES: usize = 1 << 30;
/// Largest header read: the config, vocabularies (the largest cap holds 100,000 words) and
/// counters as JSON.
pub const MAX_HEADER_BYTES: usize = 16 << 20;

/// FNV-1a, 64 bits: the container's checksum.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_on(FNV_START, bytes)
}

/// FNV-1a's starting value (its offset basis).
pub const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a continued from `hash` over `bytes`: one hash over data read piece by piece.
pub fn fnv1a_on(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Writes the container.
pub fn write(kind: &Kind, header: &[u8], record: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + header.len() + record.len());
    out.extend_from_slice(kind.magic);
    out.extend_from_slice(&kind.newest.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(&(record.len() as u64).to_le_bytes());
    out.extend_from_slice(record);
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A container read back: its version, header bytes and record bytes.
pub struct Parts<'a> {
    pub version: u32,
    pub header: &'a [u8],
    pub record: &'a [u8],
}

/// Reads the container, checking magic, version, lengths and checksum.
pub fn read<'a>(kind: &Kind, bytes: &'a [u8]) -> Result<Parts<'a>, CheckpointError> {
    if bytes.len() < 8 || &bytes[..8] != kind.magic {
        return Err(CheckpointError::NotACheckpoint(kind.name));
    }
    let corrupt = |why: &str| CheckpointError::Corrupt(why.to_string());
    if bytes.len() > kind.max_bytes {
        return Err(CheckpointError::Corrupt(format!(
            "it is {} MB, over the {} MB a {} checkpoint can be",
            bytes.len() / 1_000_000,
            kind.max_bytes / 1_000_000,
            kind.name
        )));
    }
    let u32_at = |at: usize| -> Result<u32, CheckpointError> {
        bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).ok_or_else(|| corrupt("it ends too early"))
    };
    let version = u32_at(8)?;
    if !(kind.oldest..=kind.newest).contains(&version) {
        return Err(CheckpointError::UnsupportedVersion { found: version, oldest: kind.oldest, newest: kind.newest });
    }
    if bytes.len() < 8 + 4 + 4 + 8 + 8 {
        return Err(corrupt("it ends too early"));
    }
    let (body, sum) = bytes.split_at(bytes.len() - 8);
    if fnv1a(body) != u64::from_le_bytes(sum.try_into().unwrap()) {
        return Err(corrupt("its checksum does not match (the file was changed or cut short)"));
    }
    let header_len = u32_at(12)? as usize;
    if header_len > MAX_HEADER_BYTES {
        return Err(corrupt("its header is too long"));
    }
    let header_end = 16usize.checked_add(header_len).ok_or_else(|| corrupt("bad header length"))?;
    let header = body.get(16..header_end).ok_or_else(|| corrupt("bad header length"))?;
    let record_len = body
        .get(header_end..header_end.checked_add(8).ok_or_else(|| corrupt("bad header length"))?)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .ok_or_else(|| corrupt("it ends too early"))?;
    let record_end =
        usize::try_from(record_len).ok().and_then(|n| (header_end + 8).checked_add(n)).ok_or_else(|| corrupt("the weights are cut short"))?;
    let record = body.get(header_end + 8..record_end).ok_or_else(|| corrupt("the weights are cut short"))?;
    if record_end != body.len() {
        return Err(corrupt("unexpected bytes after the weights"));
    }
    Ok(Parts { version, header, record })
}

struct Collect(Vec<(ParamId, Tensor<1>)>);
impl ModuleVisitor for Collect {
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        self.0.push((p.id, p.val().without_autodiff().reshape([-1])));
    }
}

/// Fills a fresh module with read-back weights under the trained module's parameter ids (the
/// record keeps them): a restored network is the same network, parameter for parameter.
struct Fill {
    data: VecDeque<(ParamId, TensorData)>,
    device: Device,
}
impl ModuleMapper for Fill {
    fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let shape = p.lazy_shape();
        let (id, data) = self.data.pop_front().expect("one tensor per parameter");
        Param::initialized(id, Tensor::<1>::from_data(data, &self.device).reshape(shape))
    }
}

/// Counts weights that are NaN or infinite, reading each parameter at once (CPU tensors only).
struct CountNonFinite {
    bad: usize,
    total: usize,
    /// A read that was not ready at once (never on the CPU).
    unread: bool,
}
impl ModuleVisitor for CountNonFinite {
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        // One poll: a CPU read is ready at once, and a blocking read would abort on wasm.
        let read = p.val().into_data_async();
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        let data = match std::pin::pin!(read).poll(&mut cx) {
            std::task::Poll::Ready(Ok(d)) => d,
            _ => return self.unread = true,
        };
        match data.try_into_vec_as::<f32>() {
            Ok(values) => {
                self.total += values.len();
                self.bad += values.iter().filter(|x| !x.is_finite()).count();
            }
            Err(_) => self.unread = true,
        }
    }
}

/// Casts every parameter to one float type (on the CPU: WebGPU may lack f16).
struct CastTo(FloatDType);
impl ModuleMapper for CastTo {
    fn map_float<const D: usize>(&mut self, p: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let dtype = self.0;
        p.map(move |t| t.cast(dtype))
    }
}

/// The weights of `model` as a burn record, read with async reads so it works on WebGPU too.
/// `fresh` builds an untrained network of the same shape on a device given to it (the CPU here).
/// Non-finite weights are refused: a checkpoint never carries a poisoned network.
pub async fn record_bytes<M: Module>(model: &M, fresh: impl Fn(&Device) -> M, precision: Precision) -> Result<Vec<u8>, String> {
    let mut params = Collect(Vec::new());
    model.visit(&mut params);
    let mut data = VecDeque::new();
    for (id, t) in params.0 {
        let d = t.into_data_async().await.map_err(|e| format!("reading weights failed: {e:?}"))?;
        let values = d.clone().try_to_vec::<f32>().map_err(|e| format!("unexpected weight data: {e:?}"))?;
        if values.iter().any(|x| !x.is_finite()) {
            return Err("the network has non-finite weights (NaN or infinity): not saved".into());
        }
        data.push_back((id, d));
    }
    let cpu = Device::flex();
    let mut copy = fresh(&cpu).map(&mut Fill { data, device: cpu });
    if precision == Precision::Half {
        copy = copy.map(&mut CastTo(FloatDType::F16));
    }
    let bytes = copy.into_record().into_bytes().map_err(|e| e.to_string())?;
    Ok(bytes.to_vec())
}

/// Refuses a record too small to hold a network of `params` parameters (f32, or f16 when `half`)
/// before anything is built: a header cannot make the lab build a large network from a small file.
pub fn check_record_size(record: &[u8], params: u64, half: bool) -> Result<(), CheckpointError> {
    let need = params.saturating_mul(if half { 2 } else { 4 });
    if (record.len() as u64) < need {
        return Err(CheckpointError::Corrupt(format!(
            "its weights are cut short: {} bytes for a network of {params} parameters (at least {need})",
            record.len()
        )));
    }
    Ok(())
}

/// Loads a record written by [`record_bytes`] into `fresh(device)`. Half-precision records are
/// widened on the CPU first (the networks compute in f32; WebGPU may have no f16). Weights that
/// are not finite are refused.
pub fn load_record<M: Module>(fresh: impl Fn(&Device) -> M, record: &[u8], half: bool, device: &Device) -> Result<M, CheckpointError> {
    let corrupt = |e: String| CheckpointError::Corrupt(e);
    // burn panics when a record's tensor has another kind than its parameter (an integer tensor
    // for a float weight, found by fuzzing): every weight must be stored as the precision says.
    let want = if half { burn::tensor::DType::F16 } else { burn::tensor::DType::F32 };
    let tensors = burn_pack::Reader::from_bytes(Bytes::from_bytes_vec(record.to_vec()))
        .and_then(|r| r.into_tensors())
        .map_err(|e| corrupt(format!("its weights could not be read: {e}")))?;
    if let Some(t) = tensors.iter().find(|t| t.dtype != want) {
        return Err(corrupt(format!("its weight {} is stored as {:?}, not {want:?}", crate::env::task::shown(&t.name), t.dtype)));
    }
    drop(tensors);
    let mut rec = ModuleRecord::from_bytes(Bytes::from_bytes_vec(record.to_vec())).map_err(|e| corrupt(e.to_string()))?;
    let cpu = Device::flex();
    let on_cpu = fresh(&cpu).try_load_record(rec).map_err(|e| corrupt(e.to_string()))?;
    let on_cpu = if half { on_cpu.map(&mut CastTo(FloatDType::F32)) } else { on_cpu };
    let mut count = CountNonFinite { bad: 0, total: 0, unread: false };
    on_cpu.visit(&mut count);
    if count.unread {
        return Err(corrupt("its weights could not be read".into()));
    }
    if count.bad > 0 {
        return Err(corrupt(format!("{} of its {} weights are not finite numbers (NaN or infinity)", count.bad, count.total)));
    }
    rec = on_cpu.into_record();
    fresh(device).try_load_record(rec).map_err(|e| corrupt(e.to_string()))
}
