//! `grpc_health_probe`: what the executable does when started under that
//! name (the images we build hold `/bin/grpc_health_probe`, a link to
//! `/bin/olm-catalog`). OLM's catalog pods are probed with
//! `grpc_health_probe -addr=:50051`, so it behaves as
//! github.com/grpc-ecosystem/grpc-health-probe does: the same flags (Go flag
//! syntax: `-addr=X`, `-addr X`, `--addr=X`), the same messages on stderr
//! and the same exit codes:
//!
//! - 0: the service answered SERVING (`status: SERVING`)
//! - 1: invalid arguments (a missing `-addr`, a bad duration, TLS flags,
//!   which this probe does not implement)
//! - 2: connection failure (and, as Go's flag package does, a flag it does
//!   not know)
//! - 3: the health RPC failed
//! - 4: the service answered something other than SERVING

use std::time::{Duration, Instant};

use tonic_health::pb::health_client::HealthClient;
use tonic_health::pb::HealthCheckRequest;

const INVALID_ARGUMENTS: u8 = 1;
const CONNECTION_FAILURE: u8 = 2;
const RPC_FAILURE: u8 = 3;
const UNHEALTHY: u8 = 4;

/// The name the executable answers to as the probe.
pub const PROBE_NAME: &str = "grpc_health_probe";

#[derive(Debug)]
struct Options {
    addr: String,
    service: String,
    connect_timeout: Duration,
    rpc_timeout: Duration,
    verbose: bool,
}

/// Why the arguments were refused, and the exit code.
struct ArgError(u8, String);

const STRING_FLAGS: &[&str] = &[
    "addr",
    "service",
    "connect-timeout",
    "rpc-timeout",
    "tls-ca-cert",
    "tls-client-cert",
    "tls-client-key",
    "tls-server-name",
    "gzip-compression-level",
    "user-agent",
    "alts",
];
const BOOL_FLAGS: &[&str] = &["tls", "tls-no-verify", "v", "h", "help", "spiffe", "gzip"];

const USAGE: &str = "Usage of grpc_health_probe:
  -addr string
    \t(required) tcp host:port to connect
  -connect-timeout duration
    \ttimeout for establishing connection (default 1s)
  -rpc-timeout duration
    \ttimeout for health check rpc (default 1s)
  -service string
    \tservice name to check (default: \"\")
  -user-agent string
    \tuser-agent header value of health check requests (default \"grpc_health_probe\")
  -v\tverbose logs
  -tls, -tls-no-verify, -tls-ca-cert, -tls-client-cert, -tls-client-key, -tls-server-name
    \tnot supported by this grpc_health_probe (olm-catalog): it speaks plaintext gRPC only";

/// Parses a Go duration (`1s`, `500ms`, `1m30s`, `1.5s`, `250us`).
fn parse_go_duration(s: &str) -> Option<Duration> {
    if s == "0" {
        return Some(Duration::ZERO);
    }
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest.is_empty() {
        return None;
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let num: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += num * scale;
        rest = &rest[unit_end..];
    }
    if neg {
        // A negative duration is refused as "not greater than zero".
        return Some(Duration::ZERO);
    }
    Duration::try_from_secs_f64(total).ok()
}

fn parse(args: &[String]) -> Result<Options, ArgError> {
    let mut values: std::collections::HashMap<&str, String> = Default::default();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            break;
        }
        let Some(body) = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .filter(|b| !b.is_empty())
        else {
            // Go's flag package stops at the first non-flag argument.
            break;
        };
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let bad = |msg: String| ArgError(2, format!("{msg}\n{USAGE}"));
        if let Some(flag) = BOOL_FLAGS.iter().find(|f| **f == name) {
            let v = match inline.as_deref() {
                None | Some("true") | Some("1") | Some("t") | Some("T") | Some("TRUE")
                | Some("True") => "true",
                Some("false") | Some("0") | Some("f") | Some("F") | Some("FALSE")
                | Some("False") => "false",
                Some(other) => {
                    return Err(bad(format!(
                        "invalid boolean value {other:?} for -{name}: parse error"
                    )))
                }
            };
            values.insert(flag, v.to_string());
        } else if let Some(flag) = STRING_FLAGS.iter().find(|f| **f == name) {
            let v = match inline {
                Some(v) => v,
                None => {
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| bad(format!("flag needs an argument: -{name}")))?;
                    i += 1;
                    v
                }
            };
            values.insert(flag, v);
        } else {
            return Err(bad(format!("flag provided but not defined: -{name}")));
        }
    }
    let is_true = |k: &str| values.get(k).is_some_and(|v| v == "true");
    if is_true("h") || is_true("help") {
        return Err(ArgError(0, USAGE.to_string()));
    }
    let duration = |k: &str| -> Result<Duration, ArgError> {
        match values.get(k) {
            None => Ok(Duration::from_secs(1)),
            Some(v) => parse_go_duration(v).ok_or_else(|| {
                ArgError(
                    2,
                    format!("invalid value {v:?} for flag -{k}: parse error\n{USAGE}"),
                )
            }),
        }
    };
    let connect_timeout = duration("connect-timeout")?;
    let rpc_timeout = duration("rpc-timeout")?;
    let arg_error = |m: String| ArgError(INVALID_ARGUMENTS, format!("error: {m}"));
    let addr = values.get("addr").cloned().unwrap_or_default();
    if addr.is_empty() {
        return Err(arg_error("-addr not specified".into()));
    }
    if connect_timeout.is_zero() {
        return Err(arg_error(format!(
            "-connect-timeout must be greater than zero (specified: {connect_timeout:?})"
        )));
    }
    if rpc_timeout.is_zero() {
        return Err(arg_error(format!(
            "-rpc-timeout must be greater than zero (specified: {rpc_timeout:?})"
        )));
    }
    let tls = is_true("tls");
    for (flag, set) in [
        ("-tls-no-verify", is_true("tls-no-verify")),
        ("-tls-ca-cert", values.contains_key("tls-ca-cert")),
        ("-tls-client-cert", values.contains_key("tls-client-cert")),
        ("-tls-server-name", values.contains_key("tls-server-name")),
    ] {
        if set && !tls {
            return Err(arg_error(format!(
                "specified {flag} without specifying -tls"
            )));
        }
    }
    if tls || is_true("spiffe") || values.contains_key("alts") {
        return Err(arg_error(
            "TLS, SPIFFE and ALTS are not supported by this grpc_health_probe (olm-catalog's): \
             it speaks plaintext gRPC, as OLM's catalog pods serve; use the grpc-ecosystem \
             grpc_health_probe or a native Kubernetes gRPC probe for TLS"
                .into(),
        ));
    }
    Ok(Options {
        addr,
        service: values.get("service").cloned().unwrap_or_default(),
        connect_timeout,
        rpc_timeout,
        verbose: is_true("v"),
    })
}

/// `HOST:PORT` as an `http://` URI; an empty host (`:50051`) is this
/// machine, as Go's dialer takes it.
fn endpoint_uri(addr: &str) -> Result<String, String> {
    let (host, port) = addr
        .rsplit_once(':')
        .ok_or_else(|| format!("address {addr}: missing port in address"))?;
    port.parse::<u16>()
        .map_err(|_| format!("address {addr}: invalid port"))?;
    let host = if host.is_empty() { "127.0.0.1" } else { host };
    Ok(format!("http://{host}:{port}"))
}

fn status_name(code: i32) -> String {
    match code {
        0 => "UNKNOWN".into(),
        1 => "SERVING".into(),
        2 => "NOT_SERVING".into(),
        3 => "SERVICE_UNKNOWN".into(),
        n => n.to_string(),
    }
}

async fn probe(o: &Options) -> u8 {
    let uri = match endpoint_uri(&o.addr) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("error: failed to connect service at {:?}: {e}", o.addr);
            return CONNECTION_FAILURE;
        }
    };
    if o.verbose {
        eprintln!("establishing connection");
    }
    let endpoint = match tonic::transport::Endpoint::from_shared(uri) {
        Ok(e) => e.user_agent(PROBE_NAME).ok(),
        Err(_) => None,
    };
    let Some(endpoint) = endpoint else {
        eprintln!(
            "error: failed to connect service at {:?}: not a valid address",
            o.addr
        );
        return CONNECTION_FAILURE;
    };
    // As grpc.WithBlock: retry until connected or the timeout passes.
    let start = Instant::now();
    let deadline = start + o.connect_timeout;
    let channel = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, endpoint.connect()).await {
            Ok(Ok(ch)) => break ch,
            Ok(Err(_)) if Instant::now() + Duration::from_millis(50) < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            _ => {
                eprintln!(
                    "timeout: failed to connect service {:?} within {:?}",
                    o.addr, o.connect_timeout
                );
                return CONNECTION_FAILURE;
            }
        }
    };
    let connected = start.elapsed();
    if o.verbose {
        eprintln!("connection established (took {connected:?})");
    }
    let rpc_start = Instant::now();
    let mut client = HealthClient::new(channel);
    let call = client.check(HealthCheckRequest {
        service: o.service.clone(),
    });
    let resp = match tokio::time::timeout(o.rpc_timeout, call).await {
        Err(_) => {
            eprintln!(
                "timeout: health rpc did not complete within {:?}",
                o.rpc_timeout
            );
            return RPC_FAILURE;
        }
        Ok(Err(s)) if s.code() == tonic::Code::Unimplemented => {
            eprintln!("error: this server does not implement the grpc health protocol (grpc.health.v1.Health)");
            return RPC_FAILURE;
        }
        Ok(Err(s)) if s.code() == tonic::Code::DeadlineExceeded => {
            eprintln!(
                "timeout: health rpc did not complete within {:?}",
                o.rpc_timeout
            );
            return RPC_FAILURE;
        }
        Ok(Err(s)) => {
            eprintln!(
                "error: health rpc failed: rpc error: code = {:?} desc = {}",
                s.code(),
                s.message()
            );
            return RPC_FAILURE;
        }
        Ok(Ok(r)) => r.into_inner(),
    };
    let status = status_name(resp.status);
    if resp.status != 1 {
        eprintln!("service unhealthy (responded with {status:?})");
        return UNHEALTHY;
    }
    if o.verbose {
        eprintln!(
            "time elapsed: connect={connected:?} rpc={:?}",
            rpc_start.elapsed()
        );
    }
    eprintln!("status: {status}");
    0
}

/// Runs the probe with `args` (without the program name); the exit code.
pub fn run(args: &[String]) -> u8 {
    let opts = match parse(args) {
        Ok(o) => o,
        Err(ArgError(code, msg)) => {
            eprintln!("{msg}");
            return code;
        }
    };
    if opts.verbose {
        eprintln!("parsed options:");
        eprintln!(
            "> addr={} conn_timeout={:?} rpc_timeout={:?}",
            opts.addr, opts.connect_timeout, opts.rpc_timeout
        );
        eprintln!("> tls=false");
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return CONNECTION_FAILURE;
        }
    };
    rt.block_on(probe(&opts))
}

/// Whether the program was started under the probe's name.
pub fn invoked_as_probe() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .and_then(|p| p.file_name().map(|n| n == PROBE_NAME))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("1s"), Some(Duration::from_secs(1)));
        assert_eq!(parse_go_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_go_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_go_duration("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_go_duration("0"), Some(Duration::ZERO));
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration("abc"), None);
    }

    #[test]
    fn flags_as_go_parses_them() {
        let o = parse(&args(&[
            "-addr=:50051",
            "--service",
            "x",
            "-rpc-timeout=2s",
            "-v",
        ]))
        .ok()
        .expect("parses");
        assert_eq!(o.addr, ":50051");
        assert_eq!(o.service, "x");
        assert_eq!(o.rpc_timeout, Duration::from_secs(2));
        assert_eq!(o.connect_timeout, Duration::from_secs(1));
        assert!(o.verbose);
        let code = |a: &[&str]| parse(&args(a)).err().map(|e| e.0);
        assert_eq!(code(&[]), Some(1), "no -addr");
        assert_eq!(code(&["-addr=:1", "-connect-timeout=0"]), Some(1));
        assert_eq!(code(&["-addr=:1", "-tls"]), Some(1), "TLS refused");
        assert_eq!(code(&["-addr=:1", "-tls-no-verify"]), Some(1));
        assert_eq!(code(&["-addr=:1", "-nope"]), Some(2), "unknown flag");
        assert_eq!(code(&["-addr=:1", "-rpc-timeout=soon"]), Some(2));
        assert_eq!(code(&["-addr"]), Some(2));
        assert_eq!(
            endpoint_uri(":50051").as_deref(),
            Ok("http://127.0.0.1:50051")
        );
        assert!(endpoint_uri("nohost").is_err());
    }
}
