//! Fuzzes the lab's decoders (fuzz/targets.rs) with structure-aware mutation of real seeds, on
//! the stable toolchain (fuzz/harness.rs says why not cargo-fuzz). A benchmark: build it, copy
//! the binary out of the target dir and run the copy (`scripts/fuzz-long.sh` does), e.g.
//!
//!   cargo build --release --example fuzz && cp $CARGO_TARGET_DIR/release/examples/fuzz DIR/
//!   DIR/fuzz all --inputs 1000000 --artifacts DIR/artifacts
//!
//! `--write-corpus DIR` writes each target's minimised corpus (the smallest input of each
//! outcome class, up to 16 kB each) to `DIR/<target>/`. Prints one line per target: inputs,
//! panics, inputs over 1 s, the slowest input's time, the most memory one input allocated.

#[path = "../fuzz/harness.rs"]
mod harness;
#[path = "../fuzz/targets.rs"]
mod targets;

#[global_allocator]
static ALLOC: harness::Counting = harness::Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().cloned().unwrap_or_else(|| "all".into());
    let opt = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    // Mutants per target, after its seeds.
    let inputs: u64 = opt("--inputs").and_then(|v| v.parse().ok()).unwrap_or(10_000);
    let seed: u64 = opt("--seed").and_then(|v| v.parse().ok()).unwrap_or(1);
    let artifacts = opt("--artifacts").map(std::path::PathBuf::from);
    let corpus_dir = opt("--write-corpus").map(std::path::PathBuf::from);
    // `fuzz <target> --replay FILE`: one input, its outcome and time (a finding, re-checked).
    if let Some(path) = opt("--replay") {
        let t = targets::target(&which).expect("a target");
        let input = std::fs::read(&path).expect("the input");
        let t0 = std::time::Instant::now();
        let outcome = (t.run)(&input);
        println!("{}: {} bytes, {:.1} ms: {outcome}", t.name, input.len(), t0.elapsed().as_secs_f64() * 1000.0);
        return;
    }
    let chosen: Vec<&harness::Target> = if which == "all" {
        targets::TARGETS.iter().collect()
    } else {
        which.split(',').map(|n| targets::target(n).unwrap_or_else(|| panic!("no target {n}"))).collect()
    };
    let mut failed = false;
    for t in chosen {
        let r = harness::fuzz(t, inputs, seed, artifacts.as_deref(), false);
        println!(
            "{:<22} {:>9} inputs  {:>3} panics  {:>3} over 1 s  slowest {:>8.1} ms CPU ({:.0} ms wall)  peak {:>7.1} MB  largest input {:>8} B  {:>5} outcomes  {:>6.0} s  ({})",
            t.name,
            r.inputs,
            r.panics,
            r.over_1s,
            r.max_ms,
            r.max_wall_ms,
            r.max_peak_bytes as f64 / 1e6,
            r.biggest_input,
            r.outcomes.len(),
            r.seconds,
            t.what
        );
        for note in &r.panic_notes {
            println!("    panic: {note}");
        }
        if let (Some(dir), Some(slow)) = (&artifacts, &r.slowest) {
            harness::save(dir, t.name, "slowest", slow);
        }
        if let Some(dir) = &corpus_dir {
            let dir = dir.join(t.name);
            std::fs::create_dir_all(&dir).unwrap();
            for input in r.outcomes.values().filter(|i| !i.is_empty() && i.len() <= 16_384) {
                harness::save(dir.parent().unwrap(), t.name, "min", input);
            }
        }
        failed |= r.panics > 0;
    }
    if failed {
        std::process::exit(1);
    }
}
