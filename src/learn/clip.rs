//! Gradient clipping by the global norm, as the navigator's A2C and DQN updates use it.

use burn::module::{Module, ModuleVisitor, Param};
use burn::optim::GradientsParams;
use burn::prelude::*;

/// Scales every gradient by min(1, max / ‖g‖) with ‖g‖ the norm over all of them (Pascanu et
/// al., 2013), without reading anything back.
pub fn clip_global_norm<M: Module>(model: &M, mut grads: GradientsParams, max: f64) -> GradientsParams {
    struct Norm<'a> {
        grads: &'a GradientsParams,
        sum: Option<Tensor<1>>,
    }
    impl ModuleVisitor for Norm<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.get::<D>(p.id) {
                let s = g.square().sum();
                self.sum = Some(match self.sum.take() {
                    Some(acc) => acc + s,
                    None => s,
                });
            }
        }
    }
    struct Scale<'a> {
        grads: &'a mut GradientsParams,
        factor: Tensor<1>,
    }
    impl ModuleVisitor for Scale<'_> {
        fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
            if let Some(g) = self.grads.remove::<D>(p.id) {
                let f = self.factor.clone().reshape([1; D]);
                self.grads.register::<D>(p.id, g * f);
            }
        }
    }
    let mut norm = Norm { grads: &grads, sum: None };
    model.visit(&mut norm);
    let Some(sum) = norm.sum else { return grads };
    let factor = (sum.sqrt().add_scalar(1e-6)).recip().mul_scalar(max).clamp_max(1.0);
    model.visit(&mut Scale { grads: &mut grads, factor });
    grads
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::navigator::agent::Navigator;
    use crate::navigator::agent::tests::{batch, small};
    use crate::navigator::features::NavState;
    use crate::navigator::model::{NavigatorModel, Padded};

    #[test]
    fn global_norm_clipping_scales_every_gradient_to_the_bound() {
        struct Grads<'a>(&'a GradientsParams, Vec<f32>);
        impl ModuleVisitor for Grads<'_> {
            fn visit_float<const D: usize>(&mut self, p: &Param<Tensor<D>>) {
                if let Some(g) = self.0.get::<D>(p.id) {
                    self.1.extend(g.into_data().try_to_vec::<f32>().unwrap());
                }
            }
        }
        let flat = |model: &NavigatorModel, g: &GradientsParams| {
            let mut v = Grads(g, Vec::new());
            model.visit(&mut v);
            v.1
        };
        let mut nav = Navigator::new(small(), &Device::flex().autodiff(), 2).unwrap();
        let eps = batch(&mut nav);
        let states: Vec<&NavState> = eps.iter().map(|e| &e[0].state).collect();
        let p = Padded::new(&states);
        let model = nav.model();
        let grads = || GradientsParams::from_grads(model.forward(&p).value.sum().backward(), model);
        let raw = flat(model, &grads());
        let norm = raw.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!(norm > 0.01, "{norm}");
        let clipped = flat(model, &clip_global_norm(model, grads(), 0.01));
        let clipped_norm = clipped.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((clipped_norm - 0.01).abs() < 1e-4, "{clipped_norm}");
        for (a, b) in raw.iter().zip(&clipped) {
            assert!((a * 0.01 / norm - b).abs() < 1e-6, "same direction");
        }
        let loose = flat(model, &clip_global_norm(model, grads(), 1e6));
        assert_eq!(loose, raw, "under the bound nothing changes");
    }
}
