//! Workflow-guided exploration (Liu, Guu, Pasupat, Shi & Liang, ICLR 2018): demonstrations in
//! the published format, the constraint language workflows are written in, workflow induction
//! from demonstrations, and the workflow policy that explores with them
//! (reference-implementations.md §2).

pub mod config;
pub mod constraint;
pub mod demo_import;
pub mod domnet;
pub mod domnet_config;
pub mod explore;
pub mod induction;
pub mod neighbours;
pub mod neural;
pub mod policy;
pub mod replay;
pub mod session;
pub mod word_vectors;
