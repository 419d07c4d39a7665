//! What the learning agents share: Adam with its moments kept for snapshots, and vocabularies
//! grown online with caps.

pub mod adam;
pub mod vocab;
