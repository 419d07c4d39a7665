//! Rewrites DOM-Q-Net checkpoints with half-precision (f16) weights, in place: the form the app
//! ships its pretrained agents in (half the download; they are watched, not trained further).
//! Usage: cargo run --example compact_checkpoint -- agents/*.wlq
use burn::prelude::Device;
use weblab::dom_q_net::DomQNetAgent;
use weblab::dom_q_net::checkpoint::{Checkpoint, Precision};
use weblab::util::block_on;

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: compact_checkpoint FILE.wlq ...");
        std::process::exit(2);
    }
    for file in files {
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{file}: {e}"));
        let ckpt = Checkpoint::from_bytes(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        if ckpt.header.half_precision {
            println!("{file}: already half precision ({} KiB)", bytes.len() / 1024);
            continue;
        }
        let tasks = ckpt.header.tasks.clone();
        let agent = DomQNetAgent::from_checkpoint(ckpt, &Device::flex()).unwrap_or_else(|e| panic!("{file}: {e}"));
        let out = block_on(agent.save_with(&tasks, Precision::Half)).unwrap_or_else(|e| panic!("{file}: {e}"));
        std::fs::write(&file, &out).unwrap_or_else(|e| panic!("{file}: {e}"));
        println!("{file}: {} KiB -> {} KiB", bytes.len() / 1024, out.len() / 1024);
    }
}
