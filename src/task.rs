//! The task a run names: the environment API's [`env::TaskSpec`] with the lab's generated sites
//! (gMiniWoB's [`GeneratedSite`]) in its `Generated` variant. The one place the world meets the
//! environment API: `env` knows no world, `gminiwob` is one behind it, and everything above
//! (agents, runs, links, the browser edge) names tasks and environments through here.

use crate::env;
pub use crate::gminiwob::GeneratedSite;

/// A task of the lab: one of its pages, a MiniWoB++ page, or a generated gMiniWoB site.
pub type TaskSpec = env::TaskSpec<GeneratedSite>;

/// An environment that runs the lab's tasks, generated sites included.
pub trait Env: env::Environment<GeneratedSite> {}
impl<E: env::Environment<GeneratedSite>> Env for E {}

/// The worker's requests to the page for the lab's tasks (`env::messages`).
pub type EnvRequest = env::messages::EnvRequest<GeneratedSite>;
