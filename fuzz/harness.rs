//! The fuzzing engine: structure-aware mutation of real seeds, run on the stable toolchain (no
//! coverage instrumentation: cargo-fuzz needs nightly's sanitizer flags, which this machine's
//! toolchain cannot give). Each input goes to a target's decoder under `catch_unwind`; the
//! engine counts panics, times every input and measures the memory it allocated at its peak
//! (a counting global allocator the binary installs). A watchdog saves and reports an input that
//! runs too long or allocates too much before the process is stopped.
//!
//! Shared by `examples/fuzz.rs` (the long runs) and `tests/fuzz.rs` (a short run of every
//! target in the test suite).
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use weblab::rng::Rng;

// ------------------------------------------------------------------------------ memory

/// Bytes allocated now, and the most since the last [`reset_peak`].
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Allocations beyond this fail (the process aborts): the machine is shared.
pub const MEMORY_LIMIT: usize = 4 << 30;

/// The system allocator, counting. A binary that fuzzes installs it:
/// `#[global_allocator] static A: harness::Counting = harness::Counting;`
pub struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() && !reserve(new_size - layout.size()) {
            return std::ptr::null_mut();
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > layout.size() {
                CURRENT.fetch_sub(new_size - layout.size(), Ordering::Relaxed);
            }
        } else if new_size < layout.size() {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        p
    }
}

fn reserve(n: usize) -> bool {
    let now = CURRENT.fetch_add(n, Ordering::Relaxed) + n;
    if now > MEMORY_LIMIT {
        CURRENT.fetch_sub(n, Ordering::Relaxed);
        return false;
    }
    PEAK.fetch_max(now, Ordering::Relaxed);
    true
}

/// Starts a new peak at the current use; returns the current use.
pub fn reset_peak() -> usize {
    let now = CURRENT.load(Ordering::Relaxed);
    PEAK.store(now, Ordering::Relaxed);
    now
}

pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

// ------------------------------------------------------------------------------ targets

/// A structure-aware mutator: an input, the other inputs to splice from, a new input.
pub type Mutate = fn(&mut Rng, &[u8], &[Vec<u8>]) -> Vec<u8>;

/// One decoder under fuzzing.
pub struct Target {
    pub name: &'static str,
    /// What it decodes, for reports.
    pub what: &'static str,
    /// Real inputs to start from (built once: shipped agents, sample files, generated ones).
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// A structure-aware mutant of `input` (other seeds and corpus entries to splice from).
    pub mutate: Mutate,
    /// Feeds one input to the decoder; whatever it returns (a value or a message) is fine, a
    /// panic is not. Returns the outcome's class (its message with the numbers blotted out, or
    /// "ok"): an input with a class not seen before joins the pool, a cheap stand-in for
    /// coverage, and the smallest input of each class is the target's minimised corpus.
    pub run: fn(&[u8]) -> String,
}

/// An outcome's class: a decoder's message with digits and quoted text blotted out, cut short.
pub fn class_of<T, E: std::fmt::Display>(r: Result<T, E>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => {
            let mut out = String::new();
            let mut quoted = false;
            for c in e.to_string().chars() {
                if c == '"' {
                    quoted = !quoted;
                    out.push('"');
                } else if quoted {
                    continue;
                } else if c.is_ascii_digit() {
                    if !out.ends_with('#') {
                        out.push('#');
                    }
                } else {
                    out.push(c);
                }
                if out.len() >= 100 {
                    break;
                }
            }
            out
        }
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    pub inputs: u64,
    pub accepted_seeds: usize,
    pub panics: u64,
    /// The first few panics: the message and the input's file (when saved).
    pub panic_notes: Vec<String>,
    /// The most CPU time one input took (the thread's own time: other work on the machine does
    /// not count), the input, and how many took over a second; and the most wall time.
    pub max_ms: f64,
    pub slowest: Option<Vec<u8>>,
    pub over_1s: u64,
    pub max_wall_ms: f64,
    /// The most memory one input allocated at its peak, above what was allocated before it.
    pub max_peak_bytes: usize,
    pub biggest_input: usize,
    pub seconds: f64,
    /// The smallest input of each outcome class (see [`Target::run`]).
    pub outcomes: std::collections::BTreeMap<String, Vec<u8>>,
}

/// Inputs kept between mutations: the seeds, plus mutants that were new in a cheap sense (a
/// different error message than any seen, or accepted), capped.
struct Pool {
    items: Vec<Vec<u8>>,
    cap: usize,
    /// Bytes held, and the most it may hold: mutants of checkpoints grow to a MB and more, and
    /// 2,000 of them filled 3 GB (the watchdog stopped the DOM-Q-Net run at 258,000 inputs).
    bytes: usize,
    max_bytes: usize,
}

impl Pool {
    fn has_room(&self, n: usize) -> bool {
        self.items.len() < self.cap && self.bytes + n <= self.max_bytes
    }
    fn push(&mut self, input: Vec<u8>) {
        self.bytes += input.len();
        self.items.push(input);
    }
    fn replace(&mut self, k: usize, input: Vec<u8>) {
        self.bytes = self.bytes - self.items[k].len() + input.len();
        self.items[k] = input;
    }
}

/// The most bytes of inputs kept as the smallest of their outcome class (the corpus).
const OUTCOME_BYTES: usize = 256 << 20;

/// The input being run, for the watchdog to save.
static RUNNING: Mutex<Option<(String, Vec<u8>)>> = Mutex::new(None);
static STARTED_NS: AtomicU64 = AtomicU64::new(0);
static BUSY: AtomicBool = AtomicBool::new(false);

/// Nanoseconds since the first call: one clock for the engine and its watchdog across targets.
fn now_ns() -> u64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Runs `target` on its seeds, then on `mutants` mutants of the pool, seeded with `seed`;
/// panics are caught, counted and (with `artifacts`) saved as files.
pub fn fuzz(target: &Target, mutants: u64, seed: u64, artifacts: Option<&Path>, quiet: bool) -> Report {
    install_panic_capture();
    let seeds: Vec<Vec<u8>> = (target.seeds)();
    assert!(!seeds.is_empty(), "{}: no seeds", target.name);
    let bytes = seeds.iter().map(Vec::len).sum::<usize>();
    let mut pool = Pool { items: seeds.clone(), cap: seeds.len() + 2_000, bytes, max_bytes: bytes + (256 << 20) };
    let mut rng = Rng::new(seed);
    let mut report = Report::default();
    let mut outcome_bytes = 0usize;
    start_watchdog(artifacts.map(Path::to_path_buf));
    let t0 = Instant::now();
    let mut next_note = Instant::now();
    for i in 0..seeds.len() as u64 + mutants {
        let input = if (i as usize) < seeds.len() {
            seeds[i as usize].clone()
        } else {
            let base = pool.items[rng.below(pool.items.len())].clone();
            (target.mutate)(&mut rng, &base, &pool.items)
        };
        report.biggest_input = report.biggest_input.max(input.len());
        *RUNNING.lock().unwrap() = Some((target.name.to_string(), input.clone()));
        let base_mem = reset_peak();
        STARTED_NS.store(now_ns(), Ordering::Relaxed);
        BUSY.store(true, Ordering::Relaxed);
        let started = Instant::now();
        let cpu0 = thread_cpu_ns();
        let outcome = catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
        let wall_ms = started.elapsed().as_secs_f64() * 1000.0;
        let ms = match (cpu0, thread_cpu_ns()) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e6,
            _ => wall_ms,
        };
        report.max_wall_ms = report.max_wall_ms.max(wall_ms);
        BUSY.store(false, Ordering::Relaxed);
        let used = peak().saturating_sub(base_mem);
        report.max_peak_bytes = report.max_peak_bytes.max(used);
        report.inputs += 1;
        if ms > report.max_ms {
            report.max_ms = ms;
            report.slowest = Some(input.clone());
        }
        if ms > 1000.0 {
            report.over_1s += 1;
        }
        match outcome {
            Ok(class) => {
                if (i as usize) < seeds.len() && class == "ok" {
                    report.accepted_seeds += 1;
                }
                // The smallest input of each class is kept, within a byte budget: a decoder whose
                // messages name many things (a checkpoint's weights) has tens of thousands of
                // classes, and their inputs filled 3 GB. Past the budget a new class is noted
                // without its input (an empty entry, never replaced).
                let new_class = !report.outcomes.contains_key(&class);
                let kept = report.outcomes.get(&class).map_or(0, Vec::len);
                if new_class || (kept > input.len() && kept > 0) {
                    let fits = outcome_bytes - kept + input.len() <= OUTCOME_BYTES;
                    let keep = if fits { input.clone() } else { Vec::new() };
                    outcome_bytes = outcome_bytes - kept + keep.len();
                    report.outcomes.insert(class, keep);
                }
                // A mutant with a new outcome joins the pool; others now and then, so the pool
                // drifts toward inputs that decode further.
                // Once full (by count or bytes), a new input now and then takes a mutant's place.
                let room = pool.has_room(input.len());
                if room && (new_class || rng.below(100) == 0) {
                    pool.push(input);
                } else if !room && pool.items.len() > seeds.len() && (new_class || rng.below(200) == 0) {
                    let k = seeds.len() + rng.below(pool.items.len() - seeds.len());
                    if pool.bytes - pool.items[k].len() + input.len() <= pool.max_bytes {
                        pool.replace(k, input);
                    }
                }
            }
            Err(_) => {
                report.panics += 1;
                let message = LAST_PANIC.lock().unwrap().take().unwrap_or_default();
                if report.panic_notes.len() < 10 {
                    let saved = artifacts.map(|dir| save(dir, target.name, "panic", &input));
                    report.panic_notes.push(format!("{message} (input: {})", saved.map_or("not saved".into(), |p| p.display().to_string())));
                }
            }
        }
        if !quiet && next_note.elapsed() > Duration::from_secs(30) {
            next_note = Instant::now();
            eprintln!(
                "[{}] {} inputs, {} panics, {} outcomes, slowest {:.1} ms CPU, peak {:.1} MB, {:.0} inputs/s",
                target.name,
                report.inputs,
                report.panics,
                report.outcomes.len(),
                report.max_ms,
                report.max_peak_bytes as f64 / 1e6,
                report.inputs as f64 / t0.elapsed().as_secs_f64()
            );
        }
    }
    *RUNNING.lock().unwrap() = None;
    report.seconds = t0.elapsed().as_secs_f64();
    report
}

/// The CPU time this thread has run, in ns (Linux's schedstat), so a busy machine does not make
/// an input look slow.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Saves `input` under `dir/<target>/<kind>-<hash>`; returns the path.
pub fn save(dir: &Path, target: &str, kind: &str, input: &[u8]) -> PathBuf {
    let dir = dir.join(target);
    std::fs::create_dir_all(&dir).ok();
    let hash = weblab::learn::checkpoint::fnv1a(input);
    let path = dir.join(format!("{kind}-{hash:016x}"));
    std::fs::write(&path, input).ok();
    path
}

static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// Panics are caught and counted, not printed (a run may see many): the hook keeps the last one's
/// message and place.
fn install_panic_capture() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let bt = std::backtrace::Backtrace::force_capture();
            let frames: Vec<String> =
                bt.to_string().lines().filter(|l| l.contains("weblab::") || l.contains("src/")).take(16).map(|l| l.trim().to_string()).collect();
            *LAST_PANIC.lock().unwrap() = Some(format!("{info}\n    {}", frames.join("\n    ")));
        }));
    });
}

/// Every second: an input running past 20 s, or the process past 3 GB, is saved and reported,
/// and the process stops (a hang or runaway allocation is a finding, not a wait).
fn start_watchdog(artifacts: Option<PathBuf>) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(move || {
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(200));
                let busy = BUSY.load(Ordering::Relaxed);
                let ran = now_ns().saturating_sub(STARTED_NS.load(Ordering::Relaxed));
                let mem = current();
                let why = if busy && ran > 20_000_000_000 {
                    Some(format!("an input has run for {:.0} s", ran as f64 / 1e9))
                } else if mem > 3 << 30 {
                    Some(format!("{:.1} GB allocated", mem as f64 / 1e9))
                } else {
                    None
                };
                if let Some(why) = why {
                    let running = RUNNING.lock().unwrap().clone();
                    if let (Some((target, input)), Some(dir)) = (running, artifacts.as_ref()) {
                        let path = save(dir, &target, "stopped", &input);
                        eprintln!("[{target}] stopped: {why}; input saved as {}", path.display());
                    } else {
                        eprintln!("fuzz stopped: {why}");
                    }
                    std::process::exit(3);
                }
            }
        });
    });
}

// ------------------------------------------------------------------------------ corpus files

/// The committed corpus of a target: `fuzz/corpus/<target>/*` (small seeds and inputs that once
/// broke a decoder).
pub fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect()).unwrap_or_default();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// A file of the repository or the shared reference folder, when it is there.
pub fn file(path: &str) -> Option<Vec<u8>> {
    let p = Path::new(path);
    let p = if p.is_absolute() { p.to_path_buf() } else { Path::new(env!("CARGO_MANIFEST_DIR")).join(p) };
    std::fs::read(p).ok()
}

// ------------------------------------------------------------------------------ mutation

const INTERESTING_INTS: [i128; 22] = [
    0,
    1,
    2,
    3,
    -1,
    7,
    16,
    127,
    128,
    255,
    256,
    1000,
    65_535,
    65_536,
    1 << 20,
    2_147_483_647,
    2_147_483_648,
    4_294_967_295,
    4_294_967_296,
    9_007_199_254_740_993,
    18_446_744_073_709_551_615,
    -9_223_372_036_854_775_808,
];

const HOSTILE_STRINGS: [&str; 22] = [
    "",
    " ",
    "../x",
    "../../../../etc/passwd",
    "//evil.example/x/",
    "https://evil.example/miniwob/html/",
    "javascript:alert(1)",
    "<script>parent.x=1</script>",
    "<img src=x onerror=alert(1)>",
    "%2e%2e/",
    "miniwob/html/../../",
    "/miniwob/html/miniwob/",
    "a\\b",
    "x?y#z",
    "\u{0}",
    "\u{202e}rtl",
    "ĥéllo wörld 😀",
    "NaN",
    "-0",
    "1e309",
    "click-test",
    "miniwob/html/",
];

/// 1 to 4 byte-level edits.
pub fn mutate_bytes(rng: &mut Rng, data: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let mut v = data.to_vec();
    for _ in 0..1 + rng.below(4) {
        let n = v.len();
        match rng.below(11) {
            0 if n > 0 => {
                let i = rng.below(n);
                v[i] ^= 1 << rng.below(8);
            }
            1 if n > 0 => {
                let i = rng.below(n);
                v[i] = *rng.choose(&[0u8, 1, 0x7f, 0x80, 0xff, b'"', b'{', b'}', b'[', b',', b'-', b'9']).unwrap();
            }
            2 => {
                let at = rng.below(n + 1);
                let k = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..k).map(|_| rng.next_u32() as u8).collect();
                v.splice(at..at, bytes);
            }
            3 if n > 1 => {
                let a = rng.below(n);
                let len = 1 + rng.below((n - a).min(64));
                v.drain(a..a + len);
            }
            4 if n > 1 => {
                let a = rng.below(n);
                let len = 1 + rng.below((n - a).min(256));
                let chunk = v[a..a + len].to_vec();
                let at = rng.below(n + 1);
                v.splice(at..at, chunk);
            }
            5 if !others.is_empty() => {
                let o = &others[rng.below(others.len())];
                if !o.is_empty() {
                    let a = rng.below(o.len());
                    let len = 1 + rng.below((o.len() - a).min(512));
                    let at = rng.below(n + 1);
                    v.splice(at..at, o[a..a + len].iter().copied());
                }
            }
            6 if n > 0 => v.truncate(rng.below(n)),
            7 if n >= 4 => {
                let at = rng.below(n - 3);
                let x = *rng.choose(&INTERESTING_INTS).unwrap() as u32;
                v[at..at + 4].copy_from_slice(&x.to_le_bytes());
            }
            8 if n >= 8 => {
                let at = rng.below(n - 7);
                let x = *rng.choose(&INTERESTING_INTS).unwrap() as u64;
                v[at..at + 8].copy_from_slice(&x.to_le_bytes());
            }
            9 if n > 0 => {
                // A run of one byte (long numbers, deep nesting).
                let at = rng.below(n + 1);
                let b = *rng.choose(&[b'[', b'{', b'9', b'a', 0u8]).unwrap();
                let k = 1 + rng.below(2_000);
                v.splice(at..at, std::iter::repeat_n(b, k));
            }
            _ if n > 0 => {
                let i = rng.below(n);
                v[i] = v[i].wrapping_add(1 + rng.below(3) as u8);
            }
            _ => v.push(rng.next_u32() as u8),
        }
    }
    v
}

/// Every node of `v` as a path of steps (object key or array index).
fn paths(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                at.push(Step::Key(k.clone()));
                paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                at.push(Step::Index(i));
                paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

fn node_mut<'a>(mut v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    for s in path {
        v = match (s, v) {
            (Step::Key(k), Value::Object(m)) => m.get_mut(k).expect("path"),
            (Step::Index(i), Value::Array(a)) => &mut a[*i],
            _ => unreachable!("paths come from the same value"),
        };
    }
    v
}

/// A random node of another document (crossover).
fn donor(rng: &mut Rng, others: &[Value]) -> Option<Value> {
    let o = others.get(rng.below(others.len().max(1)))?;
    let mut all = Vec::new();
    paths(o, &mut Vec::new(), &mut all);
    let p = &all[rng.below(all.len())];
    let mut o = o.clone();
    Some(node_mut(&mut o, p).clone())
}

/// 1 to 3 edits of a JSON document, each at a random node: numbers to edge values, strings to
/// hostile ones, containers grown, cut or emptied, keys dropped or added, subtrees swapped with
/// other documents' (a node's type changed too).
pub fn mutate_json(rng: &mut Rng, v: &mut Value, others: &[Value]) {
    for _ in 0..1 + rng.below(3) {
        let mut all = Vec::new();
        paths(v, &mut Vec::new(), &mut all);
        let path = all[rng.below(all.len())].clone();
        let node = node_mut(v, &path);
        match rng.below(10) {
            0 => {
                if let Some(d) = donor(rng, others) {
                    *node = d;
                }
            }
            1 => {
                *node = match rng.below(6) {
                    0 => Value::Null,
                    1 => Value::Bool(rng.below(2) == 0),
                    2 => Value::from(0),
                    3 => Value::from(""),
                    4 => Value::Array(vec![]),
                    _ => Value::Object(Default::default()),
                }
            }
            _ => match node {
                Value::Number(_) => {
                    *node = match rng.below(4) {
                        0 => serde_json::json!(*rng.choose(&[0.5, -0.0, 1e308, -1e308, 1e-308, 0.1, 3.5e38, -1.5]).unwrap()),
                        1 => {
                            let x = node.as_f64().unwrap_or(0.0);
                            serde_json::json!(x + [-1.0, 1.0, -2.0][rng.below(3)])
                        }
                        _ => {
                            let i = *rng.choose(&INTERESTING_INTS).unwrap();
                            serde_json::from_str(&i.to_string()).unwrap_or(Value::from(0))
                        }
                    }
                }
                Value::String(s) => {
                    *s = match rng.below(5) {
                        0 => s.repeat(2 + rng.below(8)),
                        1 => "x".repeat(1 + rng.below(100_000)),
                        2 if !s.is_empty() => {
                            let mut c: Vec<char> = s.chars().collect();
                            let i = rng.below(c.len());
                            c[i] = *rng.choose(&['/', '.', '%', '\\', '?', '#', ':', '\u{0}', 'é']).unwrap();
                            c.into_iter().collect()
                        }
                        _ => rng.choose(&HOSTILE_STRINGS).unwrap().to_string(),
                    }
                }
                Value::Bool(b) => *b = !*b,
                Value::Array(a) => match rng.below(6) {
                    0 if !a.is_empty() => {
                        let i = rng.below(a.len());
                        a.remove(i);
                    }
                    1 if !a.is_empty() => {
                        let i = rng.below(a.len());
                        let k = *rng.choose(&[1, 2, 10, 100, 1_000]).unwrap();
                        let e = a[i].clone();
                        for _ in 0..k {
                            a.insert(i, e.clone());
                        }
                    }
                    2 => a.clear(),
                    3 if a.len() > 1 => a.reverse(),
                    _ => {
                        if let Some(d) = donor(rng, others) {
                            let at = rng.below(a.len() + 1);
                            a.insert(at, d);
                        }
                    }
                },
                Value::Object(m) => {
                    if !m.is_empty() && rng.below(2) == 0 {
                        let keys: Vec<String> = m.keys().cloned().collect();
                        m.remove(&keys[rng.below(keys.len())]);
                    } else if let Some(d) = donor(rng, others) {
                        let key = match rng.below(3) {
                            0 => "html".to_string(),
                            1 => rng
                                .choose(&["source", "base_url", "name", "format", "schema", "task", "seed", "steps", "config"])
                                .unwrap()
                                .to_string(),
                            _ => format!("k{}", rng.below(100)),
                        };
                        m.insert(key, d);
                    }
                }
                Value::Null => *node = Value::from(*rng.choose(&INTERESTING_INTS).unwrap() as i64),
            },
        }
    }
}

/// JSON text mutated as a document (most of the time) or as bytes.
pub fn mutate_json_text(rng: &mut Rng, data: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    if rng.below(10) < 7
        && let Ok(mut v) = serde_json::from_slice::<Value>(data)
    {
        let docs: Vec<Value> =
            (0..2).filter_map(|_| others.get(rng.below(others.len().max(1)))).filter_map(|o| serde_json::from_slice(o).ok()).collect();
        mutate_json(rng, &mut v, &docs);
        return serde_json::to_vec(&v).expect("a value serialises");
    }
    mutate_bytes(rng, data, others)
}

// ------------------------------------------------------------------------------ formats

/// A checkpoint container's magic, version, header and record.
pub type ContainerParts = ([u8; 8], u32, Vec<u8>, Vec<u8>);

/// The parts of the lab's checkpoint container (magic, version, header, record), or None.
pub fn container_parts(b: &[u8]) -> Option<ContainerParts> {
    if b.len() < 32 {
        return None;
    }
    let magic: [u8; 8] = b[..8].try_into().ok()?;
    let version = u32::from_le_bytes(b[8..12].try_into().ok()?);
    let hlen = u32::from_le_bytes(b[12..16].try_into().ok()?) as usize;
    let header = b.get(16..16 + hlen)?.to_vec();
    let rlen = u64::from_le_bytes(b.get(16 + hlen..24 + hlen)?.try_into().ok()?) as usize;
    let record = b.get(24 + hlen..24 + hlen + rlen)?.to_vec();
    Some((magic, version, header, record))
}

/// The container written back with a correct checksum.
pub fn container_write(magic: &[u8; 8], version: u32, header: &[u8], record: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(&(record.len() as u64).to_le_bytes());
    out.extend_from_slice(record);
    let sum = weblab::learn::checkpoint::fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// A checkpoint mutated inside its container (its header as JSON, its record as bytes, its
/// version), resealed with a right checksum most of the time, so mutants reach the decoder
/// behind the checksum.
pub fn mutate_container(rng: &mut Rng, data: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    let Some((magic, mut version, mut header, mut record)) = container_parts(data) else {
        return mutate_bytes(rng, data, others);
    };
    match rng.below(10) {
        0..=5 => {
            let headers: Vec<Vec<u8>> = others.iter().filter_map(|o| container_parts(o).map(|p| p.2)).take(4).collect();
            header = mutate_json_text(rng, &header, &headers);
        }
        6 | 7 => record = mutate_bytes(rng, &record, &[]),
        8 => version = *rng.choose(&[0, 1, 2, 3, u32::MAX]).unwrap(),
        _ => {
            // Another kind's record or header under this magic.
            if let Some((_, _, h, r)) = others.get(rng.below(others.len().max(1))).and_then(|o| container_parts(o)) {
                if rng.below(2) == 0 { header = h } else { record = r }
            }
        }
    }
    let sealed = container_write(&magic, version, &header, &record);
    if rng.below(10) == 0 { mutate_bytes(rng, &sealed, others) } else { sealed }
}

/// CRC-32 (IEEE), for gzip trailers.
fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, t) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
        }
        *t = c;
    }
    !data.iter().fold(!0u32, |c, &b| table[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8))
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

pub fn gunzip(data: &[u8]) -> Option<Vec<u8>> {
    if data.len() < 18 || data[..3] != [0x1f, 0x8b, 8] || data[3] != 0 {
        return None;
    }
    miniz_oxide::inflate::decompress_to_vec_with_limit(&data[10..data.len() - 8], 50_000_000).ok()
}

/// A gzip file mutated inside (its JSON, then packed again) or as compressed bytes.
pub fn mutate_gzip_json(rng: &mut Rng, data: &[u8], others: &[Vec<u8>]) -> Vec<u8> {
    match gunzip(data) {
        Some(inner) if rng.below(10) < 7 => {
            let docs: Vec<Vec<u8>> = others.iter().take(3).filter_map(|o| gunzip(o).or_else(|| Some(o.clone()))).collect();
            let m = mutate_json_text(rng, &inner, &docs);
            if rng.below(5) == 0 { m } else { gzip(&m) }
        }
        Some(_) => mutate_bytes(rng, data, others),
        None => {
            let m = mutate_json_text(rng, data, others);
            if rng.below(3) == 0 { gzip(&m) } else { m }
        }
    }
}
