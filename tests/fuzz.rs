//! A short run of every fuzz target (fuzz/targets.rs): its seeds and committed corpus, then a
//! few hundred mutants, none of which may panic. The long runs (a million inputs per decoder,
//! docs/security.md) are `examples/fuzz.rs`.

#[path = "../fuzz/harness.rs"]
mod harness;
#[path = "../fuzz/targets.rs"]
mod targets;

#[global_allocator]
static ALLOC: harness::Counting = harness::Counting;

/// Mutants per target, after its seeds and corpus (seconds in all).
const MUTANTS: u64 = 200;

#[test]
fn no_decoder_panics_on_its_seeds_corpus_and_mutants() {
    let mut found = Vec::new();
    for t in targets::TARGETS {
        let r = harness::fuzz(t, MUTANTS, 7, None, true);
        assert!(r.accepted_seeds > 0, "{}: none of its seeds decodes (the seeds are broken)", t.name);
        if r.panics > 0 {
            found.push(format!("{}: {} panics; first: {}", t.name, r.panics, r.panic_notes.join("\n")));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}
