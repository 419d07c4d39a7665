//! What every burn network of the lab shares: building one so its seed fixes it, and reading a
//! tensor back on any backend.

use std::sync::Mutex;

use burn::module::{Module, ModuleVisitor, Param};
use burn::prelude::*;

/// Parameter init draws from the backend's process-wide generator: one lock for the process,
/// held while seeding and initialising, so agents built at once (parallel tests, a population's
/// threads) cannot interleave their draws.
static INIT_LOCK: Mutex<()> = Mutex::new(());

/// Forces lazy parameters to initialise now, in a fixed order, so a seed fixes them.
struct Touch;
impl ModuleVisitor for Touch {
    fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
        let _ = p.val();
    }
}

/// The network `build` makes on `device`, its parameters drawn from `seed` alone.
pub fn seeded<M: Module>(device: &Device, seed: u64, build: impl FnOnce(&Device) -> M) -> M {
    unseeded(|| {
        device.seed(seed);
        build(device)
    })
}

/// A module built without a seed of its own (a test's bare layer or network), its parameters
/// drawn now under the same lock, so they cannot land inside another thread's seeded build.
pub fn unseeded<M: Module>(build: impl FnOnce() -> M) -> M {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let model = build();
    model.visit(&mut Touch);
    model
}

/// A tensor of standard normal draws from the backend's generator, under the same lock.
pub fn normal<const D: usize>(shape: [usize; D], device: &Device) -> Tensor<D> {
    let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    Tensor::random(shape, burn::tensor::Distribution::Normal(0.0, 1.0), device)
}

/// A tensor's values as f32, read back asynchronously (the web backends have no blocking read).
pub async fn read<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, String> {
    let data = t.into_data_async().await.map_err(|e| format!("reading a tensor failed: {e:?}"))?;
    data.try_into_vec_as::<f32>().map_err(|e| format!("unexpected tensor data: {e:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::{Linear, LinearConfig};

    #[test]
    fn a_seed_fixes_the_network_whatever_was_drawn_before() {
        let device = Device::flex();
        let build = |d: &Device| -> Linear { LinearConfig::new(4, 3).init(d) };
        let a = seeded(&device, 7, build);
        {
            let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            device.seed(99);
            let _ = Tensor::<2>::random([8, 8], burn::tensor::Distribution::Default, &device);
        }
        let b = seeded(&device, 7, build);
        let c = seeded(&device, 8, build);
        let w = |l: &Linear| l.weight.val().into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(w(&a), w(&b));
        assert_ne!(w(&a), w(&c));
    }
}
