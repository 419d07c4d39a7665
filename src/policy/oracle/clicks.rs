//! Scripts for click-test-2, click-button-sequence, click-link, click-dialog(-2), click-tab(-2), click-widget, click-collapsible, focus-text-2.

use super::Entry;

pub(super) const SCRIPTS: &[Entry] = &[];
