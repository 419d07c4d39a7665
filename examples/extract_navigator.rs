//! Writes navigator N of a run's snapshot (the `run.wlpr` of a `train_adversary` or study run
//! folder) as a `.wln` checkpoint, for `inspect_navigator`, `train_navigator --from` or the
//! judging scripts: e.g. a population's other navigator than the one `best.wln` holds. The
//! snapshot is read by the same code that resumes a run (`SnapshotParts`).
//!
//! cargo run --release --example extract_navigator -- RUN_DIR/run.wlpr N OUT.wln

use weblab::curriculum::train::SnapshotParts;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [src, which, out] = args.as_slice() else {
        return Err("usage: extract_navigator RUN.wlpr N OUT.wln".into());
    };
    let which: usize = which.parse().map_err(|_| format!("N must be a navigator's index, not {which}"))?;
    let bytes = std::fs::read(src).map_err(|e| format!("{src}: {e}"))?;
    let parts = SnapshotParts::read(&bytes).map_err(|e| format!("{src}: {e}"))?;
    let n = parts.navigators.len();
    let &(checkpoint, _) = parts.navigators.get(which).ok_or_else(|| format!("{src} holds navigators 0 to {}, not {which}", n - 1))?;
    std::fs::write(out, checkpoint).map_err(|e| format!("{out}: {e}"))?;
    println!("wrote navigator {which} of {n} ({} run) to {out} ({} bytes)", parts.generator_name(), checkpoint.len());
    Ok(())
}
