//! What the navigator training examples (`train_navigator`, `train_adversary`) share: their
//! command line's common flags and the success grid's print-out. Each includes it as `mod common;`
//! (a folder with no `main.rs`, so Cargo does not take it for an example of its own).

/// The command line after the program's name: the generator first, then flags.
pub struct Cli {
    args: std::vec::IntoIter<String>,
}

impl Cli {
    /// Reads the command line; `--help` (or `-h`) anywhere prints `usage` and exits.
    pub fn new(usage: &str) -> Cli {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.iter().any(|a| a == "--help" || a == "-h") {
            print!("{usage}");
            std::process::exit(0);
        }
        Cli { args: args.into_iter() }
    }

    /// The first argument, or `missing` as the error.
    pub fn generator(&mut self, missing: &str) -> Result<String, String> {
        self.args.next().ok_or_else(|| missing.to_string())
    }

    pub fn next_flag(&mut self) -> Option<String> {
        self.args.next()
    }

    /// The value after `flag`.
    pub fn value(&mut self, flag: &str) -> Result<String, String> {
        self.args.next().ok_or(format!("{flag} needs a value"))
    }

    /// The value after `flag`, as a number.
    pub fn num(&mut self, flag: &str) -> Result<f64, String> {
        let s = self.value(flag)?;
        s.parse::<f64>().map_err(|_| format!("{flag}: not a number: {s}"))
    }
}

/// The flags both examples take, with each example's own defaults.
pub struct Common {
    pub seed: u64,
    pub minutes: f64,
    pub iterations: Option<u64>,
    pub judge_every_s: f64,
    pub judge_seeds: u32,
    pub out: Option<String>,
}

impl Common {
    /// Takes `flag` (and its value) when it is one of the common flags; false otherwise.
    pub fn take(&mut self, flag: &str, cli: &mut Cli) -> Result<bool, String> {
        match flag {
            "--seed" => self.seed = cli.num(flag)? as u64,
            "--minutes" => self.minutes = cli.num(flag)?,
            "--iterations" => self.iterations = Some(cli.num(flag)? as u64),
            "--judge-every" => self.judge_every_s = cli.num(flag)?,
            "--judge-seeds" => self.judge_seeds = cli.num(flag)? as u32,
            "--out" => self.out = Some(cli.value(flag)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Prints a success grid (rows in `weblab::gminiwob::test_sites::TEST_SITES` order), each line after `indent`.
#[allow(dead_code)] // train_navigator's; train_adversary's grids come from weblab::study
pub fn print_grid(indent: &str, grid: &[Vec<f64>]) {
    println!("{}", weblab::study::run::grid_text(indent, grid));
}
