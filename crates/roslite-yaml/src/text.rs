//! Looking things up in the YAML text by `saphyr-parser`'s positions (counted in
//! characters): what the reader and the error wording both need, below either.

use crate::tree::Position;

/// Character positions (as `saphyr-parser` counts them) to characters, for look-ups that
/// mostly move forward through the text, as the reader's do: each look-up walks on from the
/// previous one, so a whole text costs one pass instead of one pass per look-up.
pub(crate) struct CharCursor<'t> {
    text: &'t str,
    ascii: bool,
    /// The last look-up: its character index and the byte offset of that character.
    char_index: usize,
    byte_index: usize,
}

impl<'t> CharCursor<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Self {
            text,
            ascii: text.is_ascii(),
            char_index: 0,
            byte_index: 0,
        }
    }

    /// The character at `index`, counted in characters.
    pub(crate) fn char_at(&mut self, index: usize) -> Option<char> {
        if self.ascii {
            return self.text.as_bytes().get(index).map(|&b| char::from(b));
        }
        if index < self.char_index {
            // Rare (positions go forward); start over rather than walk back.
            self.char_index = 0;
            self.byte_index = 0;
        }
        let mut chars = self.text[self.byte_index..].char_indices();
        let steps = index - self.char_index;
        #[cfg(test)]
        work::add(steps);
        let (offset, c) = chars.nth(steps)?;
        self.char_index = index;
        self.byte_index += offset;
        Some(c)
    }
}

/// The character at `index`, counted in characters as `saphyr-parser` counts.
pub(crate) fn char_at(text: &str, index: usize) -> Option<char> {
    if text.is_ascii() {
        text.as_bytes().get(index).map(|&b| char::from(b))
    } else {
        text.chars().nth(index)
    }
}

/// The first tab in the indentation of a line with content, from line `from` on.
pub(crate) fn indenting_tab(text: &str, from: usize) -> Option<Position> {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find_map(|(index, line)| {
            let content = line.trim_start_matches([' ', '\t']);
            if content.is_empty() || content.starts_with('#') {
                return None;
            }
            let indentation = &line[..line.len() - content.len()];
            indentation.find('\t').map(|at| Position {
                line: index + 1,
                column: at + 1,
            })
        })
}

/// Whether only blanks and comments follow the character at `index`.
pub(crate) fn rest_is_blank(text: &str, index: usize) -> bool {
    let start = if text.is_ascii() {
        index.min(text.len())
    } else {
        text.char_indices()
            .nth(index)
            .map_or(text.len(), |(at, _)| at)
    };
    text[start..].lines().all(|line| {
        let line = line.trim_start();
        line.is_empty() || line.starts_with('#')
    })
}

/// Counts the units of work whose number must stay proportional to the text's length (characters
/// stepped over, keys compared), so that a test can tell linear reading from quadratic reading
/// without timing it.
#[cfg(test)]
pub(crate) mod work {
    use std::cell::Cell;

    thread_local! {
        static DONE: Cell<usize> = const { Cell::new(0) };
    }

    pub(crate) fn add(units: usize) {
        DONE.with(|done| done.set(done.get() + units));
    }

    /// The work done on this thread since the last call.
    pub(crate) fn take() -> usize {
        DONE.with(|done| done.replace(0))
    }
}
