//! gMiniWoB: websites generated from 40 design primitives (Gur et al., "Adversarial environment
//! generation for learning to navigate the web" and "Environment generation for zero-shot
//! compositional RL" / CoDE), as the lab's environment for navigators and adversaries.
//!
//! Pure core, one room a job:
//! - [`primitive`]: the 40 primitives (active ones carry a profile field);
//! - [`design`]: the design format (which primitive on which page), validated;
//! - [`profile`]: the instruction's field values, drawn per seed from realistic pools (or the
//!   reference's fixed values);
//! - [`site`]: the seeded renderer, design + seed → the site's element tree, its HTML and its
//!   fields;
//! - [`layout`]: every element's box, in integer pixels (no box depends on the browser's fonts);
//! - [`reward`]: the papers' potential-based reward;
//! - [`test_sites`]: the 5 test sites × 4 difficulty levels, and the random-design generator;
//! - [`task`]: a generated site as a task (`env::TaskSpec::Generated`'s data) and its page;
//! - [`sim`]: a native simulator of a rendered site, whose observations and rewards equal the
//!   live page's (`tests/web_gminiwob_sim.rs` checks it).
//!
//! The browser edge loads `tasks/gminiwob.html` (a task page on the lab's own core) and hands it
//! the rendered site; see `crate::web::env`.

pub mod design;
pub mod layout;
pub mod primitive;
pub mod profile;
pub mod reward;
pub mod sim;
pub mod site;
pub mod task;
pub mod test_sites;

pub use design::{Design, DesignError, Placed};
pub use primitive::{Kind, PRIMITIVES, Primitive};
pub use profile::Values;
pub use reward::{FieldState, RewardConfig, Shaper};
pub use sim::SiteSim;
pub use site::{FieldKind, Site, SiteField, render};
pub use task::GeneratedSite;
