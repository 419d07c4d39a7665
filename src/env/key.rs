//! Keys as MiniWoB++ 1.1's `PRESS_KEY` names them, and the key events a US keyboard gives for
//! them.
//!
//! The syntax is MiniWoB++'s (`selenium_actions.execute_press_key`): modifier prefixes `C-`
//! (Control), `S-` (Shift), `A-` (Alt) and `M-` (Meta), then either one printable character
//! (`a`, `A`, `1`, `!`: a shifted character holds Shift, as its docs say) or a special key in
//! angle brackets (`<Enter>`, `<ArrowLeft>`, `<Numpad7>`, … the WebDriver names of its
//! `constants.WEBDRIVER_SPECIAL_KEYS`). `C-c` is Control+c, `S-<Tab>` is Shift+Tab.

/// One key press: what `keydown`/`keyup` carry, and the text it inserts when it inserts any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPress {
    pub ctrl: bool,
    pub shift: bool,
    pub alt: bool,
    pub meta: bool,
    /// The DOM `key` value (`"a"`, `"A"`, `"Enter"`, `" "`).
    pub key: String,
    /// The DOM `code` value on a US layout (`"KeyA"`, `"Enter"`, `"Numpad7"`); empty for
    /// characters no US key gives.
    pub code: String,
    /// The legacy `keyCode`/`which` pages still read (`13` for Enter, `65` for a and A).
    pub key_code: u32,
    /// The character it types (printable keys, Space and the numpad's digits and operators)
    /// when no Control, Alt or Meta is held.
    pub text: Option<char>,
}

impl KeyPress {
    /// Parses MiniWoB++'s key syntax; an unknown name or a malformed string is an error saying why.
    pub fn parse(name: &str) -> Result<KeyPress, String> {
        let mut rest = name;
        let (mut ctrl, mut shift, mut alt, mut meta) = (false, false, false, false);
        loop {
            let flag = match rest.get(..2) {
                Some("C-") if rest.len() > 2 => &mut ctrl,
                Some("S-") if rest.len() > 2 => &mut shift,
                Some("A-") if rest.len() > 2 => &mut alt,
                Some("M-") if rest.len() > 2 => &mut meta,
                _ => break,
            };
            *flag = true;
            rest = &rest[2..];
        }
        let mut press = if let Some(special) = rest.strip_prefix('<').and_then(|r| r.strip_suffix('>')) {
            special_key(special).ok_or_else(|| format!("unknown key <{special}> in \"{name}\""))?
        } else {
            let mut chars = rest.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if !c.is_control() => char_key(c),
                _ => return Err(format!("\"{name}\" is not a key: one character or a <Name>, after C-, S-, A- or M- prefixes")),
            }
        };
        press.ctrl = ctrl;
        press.shift |= shift;
        press.alt = alt;
        press.meta = meta;
        if ctrl || alt || meta {
            press.text = None;
        }
        Ok(press)
    }

    /// The key that types `c` (`TYPE_TEXT` presses one per character; a newline is Enter).
    pub fn for_char(c: char) -> KeyPress {
        match c {
            '\n' | '\r' => special_key("Enter").expect("Enter"),
            '\t' => special_key("Tab").expect("Tab"),
            c => char_key(c),
        }
    }

    /// A key that stands for a modifier while it is held (`keydown` before, `keyup` after).
    pub fn modifier(name: &str) -> KeyPress {
        special_key(name).expect("a modifier key")
    }

    /// Whether Control, Alt or Meta is held (such presses type nothing).
    pub fn is_command(&self) -> bool {
        self.ctrl || self.alt || self.meta
    }
}

/// The keys MiniWoB++'s default `PRESS_KEY` set allows (`constants.DEFAULT_ALLOWED_KEYS`, from
/// Humphreys et al. 2022): what the random policy samples on pages whose input is keys.
pub const DEFAULT_ALLOWED_KEYS: &[&str] = &[
    "<Enter>",
    "<PageUp>",
    "<PageDown>",
    "<Backspace>",
    "<Delete>",
    "<Tab>",
    "<Space>",
    "<ArrowUp>",
    "<ArrowRight>",
    "<ArrowDown>",
    "<ArrowLeft>",
    "[",
    "]",
    "-",
    "=",
    ";",
    "\"",
    "\\",
    ",",
    ".",
    "/",
    "`",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "0",
    "<Numpad0>",
    "<Numpad1>",
    "<Numpad2>",
    "<Numpad3>",
    "<Numpad4>",
    "<Numpad5>",
    "<Numpad6>",
    "<Numpad7>",
    "<Numpad8>",
    "<Numpad9>",
    "<NumpadAdd>",
    "<NumpadMultiply>",
    "<NumpadSubtract>",
    "<NumpadDivide>",
    "<NumpadDecimal>",
    "<NumpadEnter>",
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "h",
    "i",
    "j",
    "k",
    "l",
    "m",
    "n",
    "o",
    "p",
    "q",
    "r",
    "s",
    "t",
    "u",
    "v",
    "w",
    "x",
    "y",
    "z",
    "C-a",
    "C-c",
    "C-x",
    "C-v",
    "A",
    "B",
    "C",
    "D",
    "E",
    "F",
    "G",
    "H",
    "I",
    "J",
    "K",
    "L",
    "M",
    "N",
    "O",
    "P",
    "Q",
    "R",
    "S",
    "T",
    "U",
    "V",
    "W",
    "X",
    "Y",
    "Z",
];

fn press(key: &str, code: &str, key_code: u32, text: Option<char>) -> KeyPress {
    KeyPress { ctrl: false, shift: false, alt: false, meta: false, key: key.to_string(), code: code.to_string(), key_code, text }
}

fn special_key(name: &str) -> Option<KeyPress> {
    let k = match name {
        "Enter" => press("Enter", "Enter", 13, None),
        "NumpadEnter" => press("Enter", "NumpadEnter", 13, None),
        "Tab" => press("Tab", "Tab", 9, None),
        "Backspace" => press("Backspace", "Backspace", 8, None),
        "Delete" => press("Delete", "Delete", 46, None),
        "Escape" => press("Escape", "Escape", 27, None),
        "Space" => press(" ", "Space", 32, Some(' ')),
        "PageUp" => press("PageUp", "PageUp", 33, None),
        "PageDown" => press("PageDown", "PageDown", 34, None),
        "End" => press("End", "End", 35, None),
        "Home" => press("Home", "Home", 36, None),
        "ArrowLeft" => press("ArrowLeft", "ArrowLeft", 37, None),
        "ArrowUp" => press("ArrowUp", "ArrowUp", 38, None),
        "ArrowRight" => press("ArrowRight", "ArrowRight", 39, None),
        "ArrowDown" => press("ArrowDown", "ArrowDown", 40, None),
        "Insert" => press("Insert", "Insert", 45, None),
        "Shift" => press("Shift", "ShiftLeft", 16, None),
        "Control" => press("Control", "ControlLeft", 17, None),
        "Alt" => press("Alt", "AltLeft", 18, None),
        "Meta" => press("Meta", "MetaLeft", 91, None),
        "Semicolon" => press(";", "Semicolon", 186, Some(';')),
        "Equal" => press("=", "Equal", 187, Some('=')),
        "NumpadMultiply" => press("*", "NumpadMultiply", 106, Some('*')),
        "NumpadAdd" => press("+", "NumpadAdd", 107, Some('+')),
        "NumpadSubtract" => press("-", "NumpadSubtract", 109, Some('-')),
        "NumpadDecimal" => press(".", "NumpadDecimal", 110, Some('.')),
        "NumpadDivide" => press("/", "NumpadDivide", 111, Some('/')),
        "NumpadComma" => press(",", "NumpadComma", 194, Some(',')),
        _ => {
            if let Some(d) = name.strip_prefix("Numpad").and_then(|d| d.parse::<u32>().ok()).filter(|d| *d <= 9) {
                let c = char::from_digit(d, 10).expect("a digit");
                press(&c.to_string(), name, 96 + d, Some(c))
            } else if let Some(n) = name.strip_prefix('F').and_then(|n| n.parse::<u32>().ok()).filter(|n| (1..=12).contains(n)) {
                press(name, name, 111 + n, None)
            } else {
                return None;
            }
        }
    };
    Some(k)
}

/// A printable character on a US layout: its key's code and legacy keyCode, with Shift held for
/// capitals and the shifted symbols.
fn char_key(c: char) -> KeyPress {
    const SHIFTED_DIGITS: &str = ")!@#$%^&*(";
    const PUNCT: &[(char, char, &str, u32)] = &[
        (';', ':', "Semicolon", 186),
        ('=', '+', "Equal", 187),
        (',', '<', "Comma", 188),
        ('-', '_', "Minus", 189),
        ('.', '>', "Period", 190),
        ('/', '?', "Slash", 191),
        ('`', '~', "Backquote", 192),
        ('[', '{', "BracketLeft", 219),
        ('\\', '|', "Backslash", 220),
        (']', '}', "BracketRight", 221),
        ('\'', '"', "Quote", 222),
    ];
    let (code, key_code, shift) = if c.is_ascii_alphabetic() {
        (format!("Key{}", c.to_ascii_uppercase()), c.to_ascii_uppercase() as u32, c.is_ascii_uppercase())
    } else if c.is_ascii_digit() {
        (format!("Digit{c}"), c as u32, false)
    } else if let Some(d) = SHIFTED_DIGITS.find(c) {
        (format!("Digit{d}"), 48 + d as u32, true)
    } else if c == ' ' {
        ("Space".to_string(), 32, false)
    } else if let Some(&(plain, _, code, kc)) = PUNCT.iter().find(|p| p.0 == c || p.1 == c) {
        (code.to_string(), kc, c != plain)
    } else {
        // A character no US key types (é, ü): no code, as an input method gives it.
        (String::new(), 0, false)
    };
    KeyPress { shift, ..press(&c.to_string(), &code, key_code, Some(c)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_miniwob_key_names() {
        let k = KeyPress::parse("C-c").unwrap();
        assert!(k.ctrl && !k.shift);
        assert_eq!((k.key.as_str(), k.code.as_str(), k.key_code, k.text), ("c", "KeyC", 67, None));
        let k = KeyPress::parse("A").unwrap();
        assert!(k.shift && !k.ctrl);
        assert_eq!((k.key.as_str(), k.key_code, k.text), ("A", 65, Some('A')));
        let k = KeyPress::parse("<Enter>").unwrap();
        assert_eq!((k.key.as_str(), k.key_code, k.text), ("Enter", 13, None));
        let k = KeyPress::parse("S-<Tab>").unwrap();
        assert!(k.shift);
        assert_eq!(k.key, "Tab");
        assert_eq!(KeyPress::parse("<Numpad7>").unwrap().text, Some('7'));
        assert_eq!(KeyPress::parse("<Numpad7>").unwrap().key_code, 103);
        assert_eq!(KeyPress::parse("<Space>").unwrap().text, Some(' '));
        assert_eq!(KeyPress::parse("!").unwrap().code, "Digit1");
        assert!(KeyPress::parse("!").unwrap().shift);
        assert_eq!(KeyPress::parse("\"").unwrap().code, "Quote");
        assert_eq!(KeyPress::parse("<F5>").unwrap().key_code, 116);
        // A bare "C-" is the character C followed by a hyphen: not a key.
        assert!(KeyPress::parse("C-").is_err());
        assert!(KeyPress::parse("-").is_ok());
        assert!(KeyPress::parse("<Hyper>").unwrap_err().contains("unknown key <Hyper>"));
        assert!(KeyPress::parse("ab").is_err());
        assert!(KeyPress::parse("").is_err());
        for k in DEFAULT_ALLOWED_KEYS {
            KeyPress::parse(k).unwrap();
        }
    }

    #[test]
    fn characters_type_themselves() {
        assert_eq!(KeyPress::for_char('\n').key, "Enter");
        assert_eq!(KeyPress::for_char('é').text, Some('é'));
        assert_eq!(KeyPress::for_char('é').key_code, 0);
        assert_eq!(KeyPress::for_char('?').code, "Slash");
    }
}
