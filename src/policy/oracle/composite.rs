//! Scripts for choose-date, search-engine, multi-orderings, multi-layouts, book-flight.

use super::Entry;

pub(super) const SCRIPTS: &[Entry] = &[];
