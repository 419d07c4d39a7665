//! Events made in the task page's own realm (`new win.MouseEvent(...)`), as the browser makes
//! them for real input: a page that checks `instanceof` or reads a legacy field (`which`,
//! `keyCode`) sees what it would see under a person's hand, except `isTrusted`.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Event, EventTarget, Window};

use super::super::util::{get, js_message};
use crate::env::{EnvError, KeyPress};

/// An event's init dictionary, built field by field.
pub struct Init(Object);

impl Init {
    /// Bubbles, cancelable and composed, as the input events the browser sends are.
    pub fn input(win: &Window) -> Init {
        Init(Object::new()).with("bubbles", true).with("cancelable", true).with("composed", true).with("view", win)
    }

    /// Neither bubbles nor cancels (`mouseenter`, `mouseleave` and their pointer twins).
    pub fn quiet(win: &Window) -> Init {
        Init(Object::new()).with("bubbles", false).with("cancelable", false).with("composed", true).with("view", win)
    }

    pub fn with(self, key: &str, value: impl Into<JsValue>) -> Init {
        let _ = Reflect::set(&self.0, &JsValue::from_str(key), &value.into());
        self
    }

    /// The mouse fields: where (client and screen coordinates alike: the lab knows no screen),
    /// which button changed (`button`) and which are held (`buttons`).
    pub fn at(self, (x, y): (i32, i32), button: i32, buttons: u16) -> Init {
        self.with("clientX", x).with("clientY", y).with("screenX", x).with("screenY", y).with("button", button).with("buttons", buttons)
    }

    /// The pointer fields a mouse's pointer events carry.
    pub fn mouse_pointer(self, pressed: bool) -> Init {
        self.with("pointerId", 1)
            .with("pointerType", "mouse")
            .with("isPrimary", true)
            .with("width", 1)
            .with("height", 1)
            .with("pressure", if pressed { 0.5 } else { 0.0 })
    }

    /// The key fields, legacy ones included (`keyCode`, `which`, `charCode`).
    pub fn key(self, k: &KeyPress) -> Init {
        self.with("key", k.key.as_str())
            .with("code", k.code.as_str())
            .with("keyCode", k.key_code)
            .with("which", k.key_code)
            .with("ctrlKey", k.ctrl)
            .with("shiftKey", k.shift)
            .with("altKey", k.alt)
            .with("metaKey", k.meta)
    }

    pub fn related(self, other: Option<&Element>) -> Init {
        match other {
            Some(e) => self.with("relatedTarget", e),
            None => self,
        }
    }
}

/// `new win[class](kind, init)`.
pub fn make(win: &Window, class: &str, kind: &str, init: Init) -> Result<Event, EnvError> {
    let ctor: Function = get(win, class).dyn_into().map_err(|_| EnvError::Browser(format!("the task page has no {class} constructor")))?;
    let args = Array::of2(&JsValue::from_str(kind), &init.0);
    Reflect::construct(&ctor, &args).map(|e| e.unchecked_into()).map_err(|e| EnvError::Browser(js_message(&e)))
}

/// Dispatches a new event on `target`; true when no handler cancelled it.
pub fn fire(target: &EventTarget, win: &Window, class: &str, kind: &str, init: Init) -> Result<bool, EnvError> {
    let ev = make(win, class, kind, init)?;
    target.dispatch_event(&ev).map_err(|e| EnvError::Browser(js_message(&e)))
}
