//! Progress for long transfers: an indicatif bar when stderr is a terminal,
//! plain lines on stderr otherwise, or nothing.

use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::{ProgressBar, ProgressStyle};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A bar on a terminal, plain lines otherwise.
    Auto,
    /// A bar on a terminal, nothing otherwise (library default).
    TerminalOnly,
    /// Nothing.
    Off,
}

/// One progress display (bytes or items).
pub struct Progress {
    bar: Option<ProgressBar>,
    lines: bool,
    events: bool,
    label: String,
    total: u64,
    done: AtomicU64,
    last_line_decile: AtomicU64,
    bytes: bool,
}

impl Progress {
    /// A progress display for `total` units (`bytes` says if they are bytes).
    pub fn new(mode: ProgressMode, label: &str, total: u64, bytes: bool) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let bar = (tty && mode != ProgressMode::Off).then(|| {
            let bar = ProgressBar::new(total);
            // Sizes and rates in the words of the plain lines and summaries
            // (human_bytes, human_rate), not indicatif's own.
            let template = "{msg} [{bar:30}] {done}/{whole} {rate}";
            if let Ok(style) = ProgressStyle::with_template(template) {
                let count = move |n: u64| {
                    if bytes {
                        human_bytes(n)
                    } else {
                        n.to_string()
                    }
                };
                let style = style
                    .with_key(
                        "done",
                        move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = w.write_str(&count(s.pos()));
                        },
                    )
                    .with_key(
                        "whole",
                        move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = w.write_str(&count(s.len().unwrap_or(0)));
                        },
                    )
                    .with_key(
                        "rate",
                        move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                            let _ = w.write_str(&human_rate(s.per_sec(), bytes));
                        },
                    );
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(label.to_string());
            bar
        });
        Progress {
            bar,
            // Percent lines only for transfers long enough to need them.
            lines: !tty && mode == ProgressMode::Auto && (!bytes || total >= 16 * 1024 * 1024),
            events: !tty && mode == ProgressMode::Auto,
            label: label.to_string(),
            total,
            done: AtomicU64::new(0),
            last_line_decile: AtomicU64::new(0),
            bytes,
        }
    }

    /// Adds `n` units done.
    pub fn inc(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        if let Some(bar) = &self.bar {
            bar.inc(n);
        } else if self.lines && self.total > 0 {
            // A line at every 10 %, so logs show movement without flooding.
            let decile = done * 10 / self.total;
            let prev = self.last_line_decile.fetch_max(decile, Ordering::Relaxed);
            if decile > prev {
                if self.bytes {
                    eprintln!(
                        "{}: {} of {}",
                        self.label,
                        human_bytes(done),
                        human_bytes(self.total)
                    );
                } else {
                    eprintln!("{}: {done}/{}", self.label, self.total);
                }
            }
        }
    }

    /// Prints a line above the bar (or plainly).
    pub fn println(&self, line: &str) {
        if let Some(bar) = &self.bar {
            bar.println(line);
        } else if self.events {
            eprintln!("{line}");
        }
    }

    /// Runs `f` with the bar hidden, so lines printed to stdout do not
    /// tear it.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// A rate per second, one decimal: `39.2/s`, or for bytes `1.5 MiB/s`.
pub fn human_rate(per_sec: f64, bytes: bool) -> String {
    let r = if per_sec.is_finite() && per_sec > 0.0 {
        per_sec
    } else {
        0.0
    };
    if bytes {
        format!("{}/s", human_bytes(r.round() as u64))
    } else {
        format!("{r:.1}/s")
    }
}

/// `1.5 MiB`-style sizes: every size the tool prints is worded this way.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_rates_are_worded_one_way() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 + 1024 * 1024 / 2), "3.5 MiB");
        assert_eq!(human_rate(39.1658, false), "39.2/s");
        assert_eq!(human_rate(0.0, false), "0.0/s");
        assert_eq!(human_rate(f64::NAN, false), "0.0/s");
        assert_eq!(human_rate(1536.4, true), "1.5 KiB/s");
    }
}
