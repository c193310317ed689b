//! What a catalog file's bytes must be before they are parsed: at most
//! [`MAX_CATALOG_FILE_BYTES`] of UTF-8 text without control characters
//! (every catalog file is JSON or YAML content, and neither allows one but
//! tab, line feed and carriage return). [`TextCheck`] judges the bytes as
//! they arrive, so a file that is not text (a decompression bomb of zeros,
//! say) is refused at its first bad byte, never read whole: by
//! [`super::read_catalog_file`] and as a catalog image is unpacked
//! (`serve::image`).

/// The largest catalog file read: 1 GiB. opm sets no limit; the largest
/// real catalog files (a whole index in one `catalog.json`) are about
/// 100 MB, and parsing a file takes a few times its size in memory, so a
/// file above this is refused before it is read.
pub const MAX_CATALOG_FILE_BYTES: u64 = 1 << 30;

/// What is wrong with a catalog file of `size` bytes, more than `limit`.
pub fn too_large(size: u64, limit: u64) -> String {
    format!(
        "{size} bytes, more than the {limit} a catalog file may have; list it in an .indexignore if it is not catalog content"
    )
}

/// Why bytes are not catalog text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotTextKind {
    /// Not UTF-8 (opm's decoders accept nothing else).
    NotUtf8,
    /// A control character (its byte), which neither JSON nor YAML allows.
    ControlCharacter(u8),
}

/// Where bytes stop being catalog text, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotText {
    /// 1-based line of the first bad byte.
    pub line: u32,
    /// 1-based column (in characters) of the first bad byte.
    pub column: u32,
    /// Its offset in the file.
    pub offset: u64,
    /// What is wrong.
    pub kind: NotTextKind,
}

impl std::fmt::Display for NotText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            NotTextKind::NotUtf8 => f.write_str("not UTF-8 text"),
            NotTextKind::ControlCharacter(b) => {
                write!(f, "it holds a control character, byte {b:#04x}")
            }
        }
    }
}

/// Checks a file's bytes fed in order, chunk by chunk (a character may be
/// cut between two chunks), keeping only the position.
#[derive(Clone, Debug, Default)]
pub struct TextCheck {
    offset: u64,
    /// Line breaks seen.
    line: u32,
    /// Characters since the last line break.
    column: u32,
    /// The start of a character cut at the previous chunk's end.
    carry: Vec<u8>,
}

impl TextCheck {
    /// Checks the next bytes of the file.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), NotText> {
        let mut rest = chunk;
        if let Some(&lead) = self.carry.first() {
            let width = utf8_width(lead);
            let take = (width - self.carry.len()).min(rest.len());
            self.carry.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.carry.len() < width {
                return Ok(());
            }
            if std::str::from_utf8(&self.carry).is_err() {
                return Err(self.at(NotTextKind::NotUtf8));
            }
            self.offset += width as u64;
            self.column += 1;
            self.carry.clear();
        }
        let (valid, invalid) = match std::str::from_utf8(rest) {
            Ok(_) => (rest.len(), false),
            Err(e) => (e.valid_up_to(), e.error_len().is_some()),
        };
        let text = &rest[..valid];
        if let Some(i) = text
            .iter()
            .position(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'))
        {
            self.advance(&text[..i]);
            return Err(self.at(NotTextKind::ControlCharacter(text[i])));
        }
        self.advance(text);
        if invalid {
            return Err(self.at(NotTextKind::NotUtf8));
        }
        self.carry.extend_from_slice(&rest[valid..]);
        Ok(())
    }

    /// Checks that the file did not end inside a character.
    pub fn finish(&self) -> Result<(), NotText> {
        match self.carry.is_empty() {
            true => Ok(()),
            false => Err(self.at(NotTextKind::NotUtf8)),
        }
    }

    /// The bytes checked so far.
    pub fn len(&self) -> u64 {
        self.offset + self.carry.len() as u64
    }

    /// True before any byte was checked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn at(&self, kind: NotTextKind) -> NotText {
        NotText {
            line: self.line.saturating_add(1),
            column: self.column.saturating_add(1),
            offset: self.offset,
            kind,
        }
    }

    /// Moves past `text`, valid UTF-8.
    fn advance(&mut self, text: &[u8]) {
        self.offset += text.len() as u64;
        let chars = |b: &[u8]| b.iter().filter(|&&b| (b as i8) >= -0x40).count() as u32;
        match text.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                let breaks = text.iter().filter(|&&b| b == b'\n').count() as u32;
                self.line = self.line.saturating_add(breaks);
                self.column = chars(&text[last + 1..]);
            }
            None => self.column = self.column.saturating_add(chars(text)),
        }
    }
}

/// The length of the UTF-8 sequence `lead` starts (a lead byte that
/// `str::from_utf8` found cut short: 2 to 4).
fn utf8_width(lead: u8) -> usize {
    match lead {
        0xf0.. => 4,
        0xe0.. => 3,
        _ => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_in_chunks(bytes: &[u8], chunk: usize) -> Result<(), NotText> {
        let mut c = TextCheck::default();
        for part in bytes.chunks(chunk) {
            c.feed(part)?;
        }
        c.finish()
    }

    #[test]
    fn text_passes_however_it_is_cut() {
        let text = "schema: olm.package\nname: é€😀\tx\r\n{\"a\": \"ü\"}\n".as_bytes();
        for chunk in 1..=text.len() {
            assert_eq!(check_in_chunks(text, chunk), Ok(()), "chunks of {chunk}");
        }
    }

    #[test]
    fn the_first_bad_byte_is_placed() {
        let text = "a: 1\nbé: \u{0}x\n".as_bytes();
        for chunk in 1..=text.len() {
            let e = check_in_chunks(text, chunk).expect_err("a NUL");
            assert_eq!(
                (e.line, e.column, e.offset, e.kind),
                (2, 5, 10, NotTextKind::ControlCharacter(0)),
                "chunks of {chunk}"
            );
        }
        let text = b"ab\ncd\xffe\x01";
        for chunk in 1..=text.len() {
            let e = check_in_chunks(text, chunk).expect_err("not UTF-8");
            assert_eq!(
                (e.line, e.column, e.offset, e.kind),
                (2, 3, 5, NotTextKind::NotUtf8)
            );
        }
        // Cut inside a character at the end of the file.
        let e = check_in_chunks("aé".as_bytes().split_last().expect("bytes").1, 1)
            .expect_err("cut short");
        assert_eq!((e.column, e.kind), (2, NotTextKind::NotUtf8));
        // A character completed by a later chunk, but wrongly.
        let e = check_in_chunks(b"\xe2\x82x", 1).expect_err("bad continuation");
        assert_eq!((e.line, e.column, e.offset), (1, 1, 0));
    }
}
