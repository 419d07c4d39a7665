//! MiniWoB++ 1.1's actions beyond the lab's element actions: the mouse at points, the wheel,
//! keys, typing key by key, and waiting. MiniWoB++ performs them as real WebDriver input; the
//! lab sends the same events itself (untrusted) in the same order, and performs the default
//! actions the browser keeps for real input ([`pointer`], [`keyboard`]).

mod events;
mod keyboard;
mod pointer;

use js_sys::Promise;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Document, Window};

use super::util::{call, sleep};
use crate::env::action::MAX_WAIT_MS;
use crate::env::{Action, EnvError, KeyPress};
pub use pointer::Page;
use pointer::Pointer;

/// The input devices of one episode: where the mouse is and what it holds, and the lab's own
/// clipboard (what Ctrl+C copied; the system clipboard is never touched).
#[derive(Default)]
pub struct InputState {
    pointer: Pointer,
    clipboard: String,
}

impl InputState {
    /// A new episode starts with the pointer off the page, nothing held and an empty clipboard,
    /// so that a seed's episode does not depend on what ran before.
    pub fn begin_episode(&mut self) {
        *self = InputState::default();
    }

    /// Performs one of the actions this module owns (`Action::is_element_action` is false);
    /// `field(i)` is the instruction's `i`-th field value (empty past the last).
    pub async fn perform(&mut self, action: &Action, page: &Page<'_>, field: impl Fn(u32) -> String) -> Result<(), EnvError> {
        // The page may have moved under a still pointer since the last action.
        self.pointer.rehover(page)?;
        match action {
            Action::Wait(ms) => {
                sleep((*ms).min(MAX_WAIT_MS)).await;
                self.pointer.rehover(page)?;
            }
            Action::MoveTo(x, y) => self.pointer.move_to(page, (*x, *y))?,
            Action::ClickAt(x, y) => self.pointer.click(page, (*x, *y), false)?,
            Action::DoubleClickAt(x, y) => self.pointer.click(page, (*x, *y), true)?,
            Action::MouseDown(x, y) => self.pointer.press(page, (*x, *y), 1)?,
            Action::MouseUp(x, y) => self.pointer.release(page, (*x, *y), 1)?,
            Action::Drag(path) => {
                action.check().map_err(|detail| EnvError::BadTarget { action: "drag".into(), detail })?;
                self.pointer.drag(page, path)?;
            }
            Action::Scroll(x, y, dy) => {
                self.pointer.wheel(page, (*x, *y), *dy)?;
                // The browser sends `scroll` events with the next frame: let it.
                next_frame(page.win).await;
                self.pointer.rehover(page)?;
            }
            Action::PressKey(name) => {
                let key = KeyPress::parse(name).map_err(|detail| EnvError::BadTarget { action: format!("press {name}"), detail })?;
                keyboard::press(page, &key, &mut self.clipboard)?;
            }
            Action::TypeText(text) => keyboard::type_text(page, text, &mut self.clipboard)?,
            Action::TypeField(i) | Action::FocusTypeField(_, i) => keyboard::type_text(page, &field(*i), &mut self.clipboard)?,
            Action::Click(_) | Action::Type(..) | Action::Select(..) | Action::SetValue(..) => {}
        }
        Ok(())
    }
}

/// Resolves at the page's next animation frame (or after 50 ms when the tab draws no frames, in
/// the background).
async fn next_frame(win: &Window) {
    let win = win.clone();
    let promise = Promise::new(&mut |resolve, _| {
        let _ = call(&win, "requestAnimationFrame", &[resolve.clone().into()]);
        let _ = call(&js_sys::global(), "setTimeout", &[resolve.into(), 50.into()]);
    });
    let _ = JsFuture::from(promise).await;
}

/// The page's window and document, for [`InputState::perform`].
pub fn page<'a>(win: &'a Window, doc: &'a Document) -> Page<'a> {
    Page { win, doc }
}
