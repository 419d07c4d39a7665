//! Scripts for the email-inbox and social-media families.

use super::Entry;

pub(super) const SCRIPTS: &[Entry] = &[];
