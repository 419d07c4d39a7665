//! Whole training runs of the population loop: what a run is asked (`config::RunConfig`, read
//! from JSON by the command line, the Python package and the Ray studies alike), the loop that
//! runs it (`run::train`), its folder (`run_dir`: snapshots that resume exactly, curves) and its
//! plot (`plot`). Above the generators and the navigator it drives.

pub mod config;
pub mod plot;
pub mod run;
pub mod run_dir;

pub use config::RunConfig;
pub use run::{Summary, train};
