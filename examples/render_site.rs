//! Writes a generated site as a standalone HTML page (the lab's `tasks/gminiwob.html` with the
//! site handed to it), to open in any browser, play, and inspect, without the app.
//! Usage: cargo run --example render_site -- (TEST_SITE LEVEL | DESIGN.json) [SEED] > site.html
//! e.g. `cargo run --example render_site -- shopping 3 7 > shopping-3.html`
use weblab::gminiwob::task::generated_page;
use weblab::gminiwob::test_sites::test_site;
use weblab::gminiwob::{Design, Values, render};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fail = |msg: String| -> ! {
        eprintln!("{msg}\nusage: render_site (TEST_SITE LEVEL | DESIGN.json) [SEED]");
        std::process::exit(2)
    };
    let (design, rest) = match args.first().map(String::as_str) {
        Some(path) if path.ends_with(".json") => {
            let text = std::fs::read_to_string(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
            (Design::from_json(&text).unwrap_or_else(|e| fail(format!("{path}: {e}"))), &args[1..])
        }
        Some(name) => {
            let level = args.get(1).and_then(|l| l.parse().ok()).unwrap_or_else(|| fail("a test site needs a level (0-3)".into()));
            (test_site(name, level).unwrap_or_else(|| fail(format!("no test site {name} at level {level}"))), &args[2..])
        }
        None => fail("no design given".into()),
    };
    let seed: u32 = rest.first().map(|s| s.parse().unwrap_or_else(|_| fail(format!("bad seed {s}")))).unwrap_or(1);
    let site = render(&design, seed, Values::default());
    // The site's JSON escapes '<', so it is inert inside the script element.
    let boot = format!(
        "<script>window.GMINIWOB_SITE = {};\nwindow.addEventListener('load', function () {{ Math.seedrandom({seed}); core.startEpisodeReal(); }});</script>\n</head>",
        site.page_json()
    );
    print!("{}", generated_page().replacen("</head>", &boot, 1));
}
