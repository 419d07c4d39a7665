// Embeds every task page and the task core into the crate, so tests (and offline tools) can
// render the lab's own tasks without a web server.
use std::{env, fs, path::Path};

fn main() {
    let root = env::var("CARGO_MANIFEST_DIR").unwrap();
    let tasks = Path::new(&root).join("tasks");
    println!("cargo:rerun-if-changed=tasks");
    let mut files: Vec<String> = Vec::new();
    collect(&tasks, &tasks, &mut files);
    files.sort();
    let mut out = String::from("pub static FILES: &[(&str, &str)] = &[\n");
    for f in &files {
        let abs = tasks.join(f);
        println!("cargo:rerun-if-changed={}", abs.display());
        out.push_str(&format!("    ({f:?}, include_str!({:?})),\n", abs.display().to_string()));
    }
    out.push_str("];\n");
    fs::write(Path::new(&env::var("OUT_DIR").unwrap()).join("task_files.rs"), out).unwrap();
}

fn collect(base: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(base, &path, out);
        } else if matches!(path.extension().and_then(|e| e.to_str()), Some("html" | "js" | "css" | "json")) {
            out.push(path.strip_prefix(base).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}
