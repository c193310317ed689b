//! Reading a column as opm's Go code scans it (shared by the reader in
//! `tables`, the schema migrations and the writes).

/// A text column as opm's Go code reads it into a string, whatever the
/// value's storage class: opm (Go `database/sql`) writes `[]byte` values such
/// as `operatorbundle.csv` and `.bundle` as BLOBs, our tool and older opm as
/// TEXT; both give their bytes. NULL gives `None`; a number its decimal form
/// (SQLite's own text conversion), as Go's `Scan` into a string does.
pub(crate) fn text(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<String>> {
    use rusqlite::types::ValueRef;
    Ok(match r.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(match std::str::from_utf8(b) {
            Ok(s) => s.to_owned(),
            // Go keeps the bytes; the closest string here.
            Err(_) => String::from_utf8_lossy(b).into_owned(),
        }),
        ValueRef::Integer(n) => Some(n.to_string()),
        ValueRef::Real(f) => Some(f.to_string()),
    })
}

/// [`text`], NULL read as the empty string (Go's `sql.NullString.String`).
pub(crate) fn text_or_empty(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<String> {
    Ok(text(r, i)?.unwrap_or_default())
}
