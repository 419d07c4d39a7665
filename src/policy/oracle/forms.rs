//! Scripts for click-option, the click-checkboxes family, enter-text-dynamic, enter-password, choose-list, use-autocomplete, navigate-tree.

use super::Entry;

pub(super) const SCRIPTS: &[Entry] = &[];
