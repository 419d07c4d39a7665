//! weblab: the browser lab for web-navigation agents, one crate for the tab (wasm32) and for
//! native runs. From the ground up (imports point down this list):
//!
//! - `rng`, `util`: seeded randomness and small helpers;
//! - `env`: the environment API (observations, actions, steps, task specs, the `Environment`
//!   trait; a generated site's data is a type parameter) and the real MiniWoB++ registry;
//!   `gminiwob` (the generated sites, their simulator and rewards) is a world behind it;
//! - `task`: the lab's task spec and environment bound — the environment API with gMiniWoB's
//!   generated sites, named once for everything above;
//! - `policy`, `runner`: the random policy, the scripted oracles, episodes and the success rule;
//!   `sim`: small simulated pages with their oracle, for native tests of the agents;
//! - `learn`: what every learning agent shares (checkpoints, Adam, vocabularies, page failures);
//! - the agents: `dom_q_net` (DOM-Q-Net), `navigator` (gMiniWoB's navigator), `wge` (workflow-
//!   guided exploration), with `demo` (demonstrations);
//! - `curriculum` (the generators DR, CL, a fixed site, and the one population training loop)
//!   and `adversary` (PAIRED, Flexible PAIRED, Flexible b-PAIRED, CoDE, ALP);
//! - `request`: what a training run is asked to do (the worker's request, the generator it
//!   names), above the agents and generators it builds; `share`: share links; `study`: a whole
//!   training run of the population loop (its config, the loop, its folder and plot), which the
//!   command line, the Python package and Ray studies call (native only);
//! - `web` (wasm32 only): the browser edge — live task pages in iframes, the `Lab` object the
//!   JavaScript shell calls, and the learner worker.

pub mod adversary;
pub mod curriculum;
pub mod demo;
pub mod dom_q_net;
pub mod env;
pub mod gminiwob;
pub mod learn;
pub mod navigator;
pub mod policy;
pub mod request;
pub mod rng;
pub mod runner;
pub mod share;
pub mod sim;
#[cfg(not(target_family = "wasm"))]
pub mod study;
pub mod task;
pub mod util;
pub mod wge;

#[cfg(target_arch = "wasm32")]
pub mod web;
