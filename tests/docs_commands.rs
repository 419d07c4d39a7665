//! Every command in README.md and docs/*.md (their ```sh blocks) names things that exist: scripts
//! (executable), examples and the flags they take, test targets, node scripts. A renamed script
//! or flag fails here instead of in a reader's terminal.

use std::fs;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (file, line) of every command line in a ```sh block of README.md and docs/*.md.
fn commands() -> Vec<(String, String)> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> =
        fs::read_dir(root().join("docs")).expect("docs/").map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        let name = f.strip_prefix(root()).unwrap().display().to_string();
        let mut in_sh = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("```") {
                in_sh = !in_sh && (t == "```sh" || t == "```bash");
                continue;
            }
            if in_sh && !t.is_empty() && !t.starts_with('#') {
                out.push((name.clone(), t.to_string()));
            }
        }
    }
    out
}

/// The command without its trailing comment and leading `VAR=value` assignments, split on spaces.
fn words(line: &str) -> Vec<String> {
    let code = line.split("  #").next().unwrap().split(" # ").next().unwrap();
    code.split_whitespace().skip_while(|w| w.contains('=') && !w.starts_with('-')).map(str::to_string).collect()
}

fn check(file: &str, line: &str) -> Result<(), String> {
    let w = words(line);
    let Some(first) = w.first() else { return Ok(()) };
    let exists = |p: &str| root().join(p).exists();
    if first.starts_with("scripts/") || first.starts_with(".ci/") {
        let path = root().join(first);
        let meta = fs::metadata(&path).map_err(|_| format!("{first} does not exist"))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            if meta.permissions().mode() & 0o111 == 0 {
                return Err(format!("{first} is not executable"));
            }
        }
        let _ = meta;
        return Ok(());
    }
    match first.as_str() {
        "node" => {
            let script = w.iter().find(|a| a.ends_with(".mjs") || a.ends_with(".js")).ok_or("node without a script")?;
            if !exists(script) {
                return Err(format!("{script} does not exist"));
            }
        }
        "cargo" => {
            if let Some(i) = w.iter().position(|a| a == "--example") {
                let name = w.get(i + 1).ok_or("--example without a name")?;
                let src = root().join("examples").join(format!("{name}.rs"));
                let mut code = fs::read_to_string(&src).map_err(|_| format!("example {name} does not exist"))?;
                // The flags every example shares.
                for shared in fs::read_dir(root().join("examples/common")).into_iter().flatten().flatten() {
                    code += &fs::read_to_string(shared.path()).unwrap_or_default();
                }
                // Every flag after `--` must be one the example reads.
                if let Some(dash) = w.iter().position(|a| a == "--") {
                    for flag in w[dash + 1..].iter().filter(|a| a.starts_with("--")) {
                        let flag = flag.split('=').next().unwrap();
                        if !code.contains(&format!("\"{flag}\"")) {
                            return Err(format!("example {name} takes no flag {flag}"));
                        }
                    }
                }
            }
            for (i, a) in w.iter().enumerate() {
                if a == "--test" {
                    let name = w.get(i + 1).ok_or("--test without a name")?;
                    if !exists(&format!("tests/{name}.rs")) {
                        return Err(format!("test target {name} does not exist"));
                    }
                }
            }
        }
        "python" | "python3" => {
            // `python -m weblab.x FILE`: the package's module and the file exist.
            if let (Some("-m"), Some(module)) = (w.get(1).map(String::as_str), w.get(2))
                && let Some(m) = module.strip_prefix("weblab.")
                && !exists(&format!("py/python/weblab/{m}.py"))
            {
                return Err(format!("module {module} does not exist"));
            }
            if let Some(file) = w.iter().find(|a| a.ends_with(".toml") || a.ends_with(".py"))
                && !exists(file)
            {
                return Err(format!("{file} does not exist"));
            }
        }
        "." | "source" | "pip" | "trunk" | "rm" | "git" | "cd" | "export" | "issues" => {}
        other => return Err(format!("unknown command {other} (add it to tests/docs_commands.rs if it is one)")),
    }
    let _ = file;
    Ok(())
}

#[test]
fn every_documented_command_names_what_exists() {
    let cmds = commands();
    assert!(cmds.len() >= 20, "found only {} commands in README.md and docs/", cmds.len());
    let failures: Vec<String> = cmds.iter().filter_map(|(f, l)| check(f, l).err().map(|e| format!("{f}: `{l}`: {e}"))).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_check_catches_what_is_missing() {
    assert!(check("x", "scripts/no-such-script.sh").is_err());
    assert!(check("x", "cargo run --release --example no_such_example").is_err());
    assert!(check("x", "cargo run --release --example train_navigator -- login-0 --no-such-flag 3").is_err());
    assert!(check("x", "cargo test --test no_such_test").is_err());
    assert!(check("x", "node tests/e2e/no-such.mjs").is_err());
    assert!(check("x", "scripts/test.sh").is_ok());
    assert!(check("x", "cargo run --release --example train_navigator -- login-0 --minutes 2  # a comment --nope").is_ok());
}
