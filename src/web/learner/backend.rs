//! The backend a run trains on, chosen at its start: WebGPU where the browser offers an adapter
//! and a short timing probe (one update of the run's own agent on a made-up batch) shows it
//! faster than the CPU, the CPU (flex) otherwise, and the page is told why. A WebGPU start or
//! probe that hangs falls back to the CPU after the request's timeouts.

use burn::prelude::Device;

use super::super::util::{now_ms, sleep};
use super::protocol::{message, post};
use crate::request::TrainRequest;
use crate::util::before;

/// One update of the agent being trained, on a made-up batch, on a device: what the backend
/// choice times.
pub(super) trait Probe {
    async fn update(&self, device: &Device) -> Result<(), String>;
}

async fn time_probe(probe: &impl Probe, device: &Device) -> Result<f64, String> {
    probe.update(device).await?; // warm-up: kernels compile, buffers allocate
    let t0 = now_ms();
    for _ in 0..2 {
        probe.update(device).await?;
    }
    Ok((now_ms() - t0) / 2.0)
}

/// Chooses the training device; returns it (with autodiff), its name, and why.
pub(super) async fn choose_backend(req: &TrainRequest, probe: &impl Probe) -> (Device, &'static str, String) {
    let cpu = Device::flex();
    if req.backend == "cpu" {
        return (cpu.autodiff(), "cpu", "the CPU was chosen in the settings".into());
    }
    let Some(adapter) = req.adapter.clone() else {
        return (cpu.autodiff(), "cpu", "this browser offers no WebGPU adapter".into());
    };
    let start_limit = req.webgpu_start_timeout_ms;
    let gpu = match before(Device::wgpu_options().init_async(), sleep(start_limit)).await {
        Some(Ok(d)) => d,
        Some(Err(e)) => return (cpu.autodiff(), "cpu", format!("WebGPU did not start ({e}); training on the CPU")),
        None => {
            let why = format!("WebGPU ({adapter}) did not start within {:.0} s; training on the CPU", start_limit as f64 / 1000.0);
            return (cpu.autodiff(), "cpu", why);
        }
    };
    let probe_limit = req.webgpu_probe_timeout_ms;
    if req.backend == "webgpu" {
        // Chosen, but a device that cannot finish one update would hang the run: try one.
        post(message("status", serde_json::json!({ "text": format!("starting WebGPU ({adapter})…") })));
        return match before(probe.update(&gpu.clone().autodiff()), sleep(probe_limit)).await {
            Some(Ok(())) => (gpu.autodiff(), "webgpu", format!("WebGPU ({adapter}) was chosen in the settings")),
            Some(Err(e)) => (cpu.autodiff(), "cpu", format!("WebGPU ({adapter}) was chosen but failed an update ({e}); training on the CPU")),
            None => (
                cpu.autodiff(),
                "cpu",
                format!("WebGPU ({adapter}) was chosen but one update took over {} s; training on the CPU", probe_limit / 1000),
            ),
        };
    }
    post(message("status", serde_json::json!({ "text": format!("timing WebGPU ({adapter}) against the CPU…") })));
    let t_gpu = match before(time_probe(probe, &gpu.clone().autodiff()), sleep(probe_limit)).await {
        Some(r) => r,
        None => {
            let why = format!("WebGPU ({adapter}) did not finish its timing probe within {} s; training on the CPU", probe_limit / 1000);
            return (cpu.autodiff(), "cpu", why);
        }
    };
    let t_cpu = time_probe(probe, &cpu.clone().autodiff()).await;
    match (t_gpu, t_cpu) {
        (Ok(g), Ok(c)) if g <= c => {
            (gpu.autodiff(), "webgpu", format!("WebGPU ({adapter}): {g:.0} ms per probe update against {c:.0} ms on the CPU"))
        }
        (Ok(g), Ok(c)) => (cpu.autodiff(), "cpu", format!("the CPU: {c:.0} ms per probe update against {g:.0} ms on WebGPU ({adapter})")),
        (Err(e), _) => (cpu.autodiff(), "cpu", format!("WebGPU ({adapter}) failed its probe ({e}); training on the CPU")),
        (Ok(_), Err(e)) => (gpu.autodiff(), "webgpu", format!("the CPU failed its probe ({e}); training on WebGPU ({adapter})")),
    }
}
