//! What the learning agents share: Adam with its moments kept for snapshots, vocabularies grown
//! online with caps, and the checkpoint container.

pub mod adam;
pub mod checkpoint;
pub mod vocab;
