//! Looking things up in the YAML text by `saphyr-parser`'s positions (counted in
//! characters): what the reader and the error wording both need, below either.

use crate::tree::Position;

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
