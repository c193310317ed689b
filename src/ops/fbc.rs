//! The file-based catalog commands that are not renders: `validate` (opm's
//! `validate`) and `init` (opm's `init`).

use std::path::PathBuf;

use crate::diag::Report;
use crate::fbc::{DeclarativeConfig, Icon, Package};

use super::Error;

/// What `validate` checks.
#[derive(Clone, Debug)]
pub struct ValidateOptions {
    /// The FBC directory (or file).
    pub dir: PathBuf,
    /// Count the checks opm does not make (warnings) as errors.
    pub strict: bool,
}

/// Validates a file-based catalog as `opm validate` does: its findings,
/// sorted, in one report. Errors are what opm v1.73.0 refuses; warnings
/// are our own checks, errors too with [`ValidateOptions::strict`]. A path
/// that is missing or unreadable is an error (not a finding about the
/// catalog).
pub fn validate(opts: &ValidateOptions) -> Result<Report, Error> {
    let mut findings = crate::fbc::validate::validate_path(&opts.dir)?;
    if opts.strict {
        for f in &mut findings {
            if f.level == crate::diag::Level::Warning {
                f.level = crate::diag::Level::Error;
            }
        }
    }
    let mut report = Report {
        subject: opts.dir.display().to_string(),
        findings,
    };
    report.sort();
    Ok(report)
}

/// The findings report with what `opm validate -o json|yaml` prints:
/// `passed`, and `error.message` when it did not pass (opm's message is
/// its error tree; ours lists each error finding on a line).
pub fn opm_validate_value(reports: &[crate::diag::Report]) -> serde_json::Value {
    let mut value = crate::diag::report_value(reports);
    let errors: Vec<String> = reports
        .iter()
        .flat_map(|r| &r.findings)
        .filter(|f| f.level == crate::diag::Level::Error)
        .map(|f| match &f.location {
            Some(at) => format!("{}:{}: {}", at.file.display(), at.line, f.message),
            None => f.message.clone(),
        })
        .collect();
    if let Some(map) = value.as_object_mut() {
        map.insert("passed".into(), errors.is_empty().into());
        if !errors.is_empty() {
            map.insert(
                "error".into(),
                serde_json::json!({ "message": errors.join("\n") }),
            );
        }
    }
    value
}

/// What `init` writes.
#[derive(Clone, Debug, Default)]
pub struct InitOptions {
    /// The package name.
    pub package: String,
    /// The channel subscriptions default to (may be empty).
    pub default_channel: String,
    /// The package's icon: an image file.
    pub icon: Option<PathBuf>,
    /// The operator's README (or other documentation).
    pub description: Option<PathBuf>,
}

/// The `olm.package` object of a new package, as `opm init` makes it (the
/// catalog holds only that object).
pub fn init(opts: &InitOptions) -> Result<DeclarativeConfig, Error> {
    use base64::Engine as _;
    let mut pkg = Package {
        schema: "olm.package".into(),
        name: opts.package.clone(),
        default_channel: opts.default_channel.clone(),
        ..Default::default()
    };
    if let Some(p) = &opts.description {
        let data = std::fs::read(p)
            .map_err(|e| Error::io(format!("{}: reading the description", p.display()), e))?;
        // As opm: bytes that are not UTF-8 become U+FFFD in the output.
        pkg.description = String::from_utf8_lossy(&data).into_owned();
    }
    if let Some(p) = &opts.icon {
        let data = std::fs::read(p)
            .map_err(|e| Error::io(format!("{}: reading the icon", p.display()), e))?;
        let Some(mediatype) = icon_media_type(&data) else {
            return Err(Error::Source(format!(
                "{}: the icon is not an image (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, PSD or SVG, by its first bytes)",
                p.display()
            )));
        };
        pkg.icon = Some(Icon {
            base64data: base64::engine::general_purpose::STANDARD.encode(&data),
            mediatype: mediatype.into(),
        });
    }
    Ok(DeclarativeConfig {
        packages: vec![pkg],
        ..Default::default()
    })
}

/// The media type of an icon, from its first bytes as opm's `init` detects
/// it; SVG (text, which opm's detection rejects) is accepted too.
pub fn icon_media_type(data: &[u8]) -> Option<&'static str> {
    let starts = |m: &[u8]| data.starts_with(m);
    let at = |i: usize, m: &[u8]| data.get(i..i + m.len()) == Some(m);
    if starts(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if starts(&[0x89, b'P', b'N', b'G']) {
        Some("image/png")
    } else if starts(b"GIF") {
        Some("image/gif")
    } else if starts(b"RIFF") && at(8, b"WEBP") {
        Some("image/webp")
    } else if (starts(b"II*\0") || starts(b"MM\0*")) && at(8, b"CR") {
        Some("image/x-canon-cr2")
    } else if starts(b"II*\0") || starts(b"MM\0*") {
        Some("image/tiff")
    } else if starts(b"BM") {
        Some("image/bmp")
    } else if starts(&[b'I', b'I', 0xBC]) {
        Some("image/vnd.ms-photo")
    } else if starts(b"8BPS") {
        Some("image/vnd.adobe.photoshop")
    } else if starts(&[0, 0, 1, 0]) {
        Some("image/x-icon")
    } else if is_svg(data) {
        Some("image/svg+xml")
    } else {
        None
    }
}

/// Whether `data` is an SVG document: text whose first element is `<svg`
/// (after an XML declaration, comments or a doctype).
fn is_svg(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else {
        return false;
    };
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if rest.starts_with("<svg") {
            return true;
        }
        let end = if rest.starts_with("<?") {
            rest.find("?>").map(|i| i + 2)
        } else if rest.starts_with("<!--") {
            rest.find("-->").map(|i| i + 3)
        } else if rest.starts_with("<!") {
            rest.find('>').map(|i| i + 1)
        } else {
            None
        };
        match end {
            Some(e) => rest = rest[e..].trim_start(),
            None => return false,
        }
    }
}
