//! The crate's layering, read from its source: the top-level modules import one another in one
//! direction (no cycle), and the environment API imports no world. Each module's `crate::x` paths
//! outside its `#[cfg(test)]` part (and its `tests.rs`) count as imports (comments are left out).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module → the top-level modules its code (tests aside) names as `crate::…`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        // A module's tests kept in a file of their own (`#[cfg(test)] mod tests;` beside `mod.rs`).
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            let parent = fs::read_to_string(file.with_file_name("mod.rs")).unwrap_or_default();
            assert!(parent.contains("#[cfg(test)]\nmod tests;"), "{} is not declared as a #[cfg(test)] module", file.display());
            continue;
        }
        let code = text.split("#[cfg(test)]").next().unwrap();
        let deps = graph.entry(module.clone()).or_default();
        for line in code.lines() {
            let line = line.split("//").next().unwrap();
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() && name != module {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

/// Modules on a cycle of imports, as the strongly connected components of more than one module.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by search from each module: small graphs, so plainness wins.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(m) = stack.pop() {
            for d in graph.get(&m).into_iter().flatten() {
                if seen.insert(d.clone()) {
                    stack.push(d.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> = graph.keys().map(|m| (m, reach(m))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, r) in &reaches {
        let mut comp: Vec<String> = r.iter().filter(|d| reaches.get(d).is_some_and(|back| back.contains(*m))).cloned().collect();
        if !comp.is_empty() {
            if !comp.contains(m) {
                comp.push((*m).clone());
            }
            comp.sort();
            found.insert(comp);
        }
    }
    found.into_iter().collect()
}

#[test]
fn top_level_modules_import_in_one_direction() {
    let graph = imports();
    assert!(graph.len() > 10, "read the crate's modules: {:?}", graph.keys());
    assert_eq!(cycles(&graph), Vec::<Vec<String>>::new(), "import cycles between top-level modules");
}

#[test]
fn the_environment_api_knows_no_world() {
    let graph = imports();
    let env: Vec<&String> = graph["env"].iter().filter(|m| !["rng", "util"].contains(&m.as_str())).collect();
    assert!(env.is_empty(), "src/env imports {env:?}: it should stand on rng and util only");
}

#[test]
fn a_cycle_is_found_when_there_is_one() {
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"]), ("d", vec!["a"])]
        .into_iter()
        .map(|(m, ds)| (m.to_string(), ds.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(cycles(&graph), vec![vec!["a".to_string(), "b".into(), "c".into()]]);
}
