//! Text from a target, made safe to show: a terminal or a markdown viewer never receives its
//! control characters raw.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` with every control character a terminal would act on written visibly, as Rust
/// writes it: `\u{1b}` for ESC (so no CSI or OSC sequence survives: `ESC]0;title BEL` can
/// no longer set a window title, nor `ESC[2J` clear the screen), `\u{7}` for BEL, `\u{0}`
/// for NUL, and so for every other C0 control, DEL and the C1 controls (U+0080 to U+009F).
/// A line feed and a tab stay, and so does a carriage return before a line feed: a text of
/// several lines keeps its lines. The one form for everything a target answered that goes
/// to a terminal (console lines, warnings, configuration errors) or into `summary.md`;
/// borrowed when there is nothing to escape.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t'))
    {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let kept = matches!(c, '\n' | '\t') || (c == '\r' && chars.peek() == Some(&'\n'));
        if c.is_control() && !kept {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_written_visibly_and_lines_stay() {
        let hostile = "a\u{1b}]0;title\u{7}\u{1b}[2J\0b\u{7f}\u{9b}31m\u{85}\u{8}\rc\r\nd\te\n";
        assert_eq!(
            visible(hostile),
            "a\\u{1b}]0;title\\u{7}\\u{1b}[2J\\u{0}b\\u{7f}\\u{9b}31m\\u{85}\\u{8}\\u{d}c\r\nd\te\n"
        );
        assert!(matches!(visible("plain ünïcode ✅\n"), Cow::Borrowed(_)));
        assert!(!visible(hostile)
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r'));
    }
}
