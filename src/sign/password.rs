//! Where the key password comes from, as with cosign: `COSIGN_PASSWORD` if
//! set (even empty), else a prompt on the terminal without echo, else one
//! line of standard input (for scripts piping it in).

use std::io::{BufRead, IsTerminal, Write};

/// The environment variable cosign reads the password from.
pub const PASSWORD_ENV: &str = "COSIGN_PASSWORD";

/// Reads the password. `confirm` asks twice on a terminal (for new keys).
pub fn read_password(confirm: bool) -> Result<Vec<u8>, super::Error> {
    read(confirm).map_err(super::Error::Password)
}

fn read(confirm: bool) -> Result<Vec<u8>, String> {
    if let Some(p) = std::env::var_os(PASSWORD_ENV) {
        return Ok(p.into_encoded_bytes());
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        let first = prompt("Enter password for private key: ")?;
        if confirm {
            let again = prompt("Enter password for private key again: ")?;
            if again != first {
                return Err("passwords do not match".into());
            }
        }
        return Ok(first.into_bytes());
    }
    let mut line = String::new();
    stdin
        .lock()
        .read_line(&mut line)
        .map_err(|e| format!("reading password from standard input: {e}"))?;
    if line.is_empty() {
        return Err(format!(
            "no password: set {PASSWORD_ENV} or run on a terminal to be prompted"
        ));
    }
    Ok(line.trim_end_matches(['\n', '\r']).as_bytes().to_vec())
}

/// Prompts on standard error and reads a line from the terminal with echo off.
fn prompt(message: &str) -> Result<String, String> {
    let mut err = std::io::stderr();
    let _ = write!(err, "{message}");
    let _ = err.flush();
    let _echo_off = EchoOff::new();
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    let _ = writeln!(err);
    read.map_err(|e| format!("reading password: {e}"))?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Turns terminal echo off on standard input until dropped.
struct EchoOff {
    saved: Option<libc::termios>,
}

impl EchoOff {
    fn new() -> Self {
        // SAFETY: tcgetattr/tcsetattr on fd 0 with a zeroed termios we own;
        // failures leave `saved` empty and echo as it was.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return EchoOff { saved: None };
            }
            let saved = t;
            t.c_lflag &= !libc::ECHO;
            t.c_lflag |= libc::ECHONL;
            if libc::tcsetattr(0, libc::TCSANOW, &t) != 0 {
                return EchoOff { saved: None };
            }
            EchoOff { saved: Some(saved) }
        }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(t) = self.saved {
            // SAFETY: restores the attributes read in `new`.
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, &t);
            }
        }
    }
}
