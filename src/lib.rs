//! weblab: the browser lab for web-navigation agents.
//!
//! The pure core (`env`, `policy`, `rng`) has no browser dependency and is exercised natively by
//! `cargo test`. The browser edge (`web`, wasm32 only) reads live task pages in an iframe, acts on
//! them, and exposes the lab to the page's JavaScript shell.

pub mod adversary;
pub mod curriculum;
pub mod demo;
pub mod dom_q_net;
pub mod env;
pub mod gminiwob;
pub mod learn;
pub mod navigator;
pub mod policy;
pub mod rng;
pub mod runner;
pub mod share;
pub mod sim;
pub mod util;
pub mod wge;

#[cfg(target_arch = "wasm32")]
pub mod web;
