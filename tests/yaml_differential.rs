//! Differential test of the YAML reader against PyYAML.
//!
//! PyYAML reads YAML 1.1 as go-yaml v2 does (both come from libyaml; PyYAML's
//! C loader is libyaml itself), and go-yaml v2 behind `sigs.k8s.io/yaml` is
//! how opm, operator-sdk and the API server read manifests. One Python
//! process (tests/python/yaml_values.py) reads every input; this file reads
//! the same inputs with `olm_catalog::yaml` and compares the values.
//!
//! Where go-yaml v2 and PyYAML resolve a scalar differently, the reader
//! follows go-yaml; each such difference is listed in [`KNOWN`] with its own
//! small fixture, and `known_differences_hold` asserts both sides of it, so
//! that a difference is never waved through unexamined.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use olm_catalog::yaml::{self, Node, Value};
use serde_json::{json, Value as J};

/// The key PyYAML's side uses for values JSON cannot hold as they are.
const TAG: &str = "\u{0}";

/// One input: a file or a text.
enum Input {
    Path(PathBuf),
    Text(String),
}

/// What PyYAML answered for each input, in order.
fn pyyaml(inputs: &[Input]) -> Vec<Result<Vec<J>, String>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/yaml_values.py");
    let mut child = Command::new("python3")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs (scripts/install-test-deps.sh installs PyYAML)");
    let mut stdin = child.stdin.take().expect("stdin");
    let requests: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(id, input)| match input {
            Input::Path(p) => json!({"id": id, "path": p}).to_string(),
            Input::Text(t) => json!({"id": id, "text": t}).to_string(),
        })
        .collect();
    // Written from another thread: the answers fill the output pipe meanwhile.
    let writer = std::thread::spawn(move || {
        for r in requests {
            stdin.write_all(r.as_bytes()).expect("write request");
            stdin.write_all(b"\n").expect("write request");
        }
    });
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let header: J = serde_json::from_str(&lines.next().expect("header").expect("read"))
        .expect("header is JSON");
    // libyaml, of which go-yaml v2 is a port; PyYAML's pure-Python scanner
    // refuses tabs that both accept. PyYAML's wheels and Debian's
    // python3-yaml have it.
    assert_eq!(
        header["loader"], "CSafeLoader",
        "PyYAML without libyaml: install a PyYAML built with it"
    );
    let mut out = Vec::with_capacity(inputs.len());
    for line in lines {
        let mut answer: J = serde_json::from_str(&line.expect("read")).expect("answer is JSON");
        assert_eq!(answer["id"], json!(out.len()), "answers come in order");
        out.push(match answer.get_mut("docs") {
            Some(J::Array(docs)) => Ok(std::mem::take(docs)),
            _ => Err(answer["error"].as_str().unwrap_or("?").to_string()),
        });
    }
    writer.join().expect("writer");
    assert!(child.wait().expect("python exits").success());
    assert_eq!(out.len(), inputs.len(), "one answer per input");
    out
}

/// A known go-yaml v2 / PyYAML difference: a fixture, what go-yaml v2 (and so
/// the reader) gives as JSON, and what PyYAML gives (or `None`: PyYAML fails).
struct Known {
    name: &'static str,
    yaml: &'static str,
    go: &'static str,
    pyyaml: Option<&'static str>,
}

/// One way the reader is more lenient than go-yaml and PyYAML (libyaml,
/// both): a name, what PyYAML says, characters one of which the text must
/// hold (none: any text), and fixtures. `lenient_inputs_stay_known` asserts
/// each fixture.
struct Lenient {
    name: &'static str,
    says: &'static str,
    needs: &'static [char],
    fixtures: &'static [&'static str],
}

const LENIENT: &[Lenient] = &[
    Lenient {
        name: "a tab in a block scalar's indentation",
        says: "found a tab character where an indentation space is expected",
        needs: &[],
        fixtures: &["key: |\n  \tliteral\n", "items:\n- >-\n  \tfolded\n"],
    },
    Lenient {
        // libyaml takes no tab at the start of a line or after `-` in block
        // context, even on a line with nothing else.
        name: "a tab where go-yaml wants indentation",
        says: "found character that cannot start any token",
        needs: &['\t'],
        fixtures: &["a:\n  - b\n  -\tc\n", "a:\n\t\n  b: 1\n"],
    },
    Lenient {
        name: "a document end marker before any document",
        says: "did not find expected node content",
        needs: &[],
        fixtures: &["...\n"],
    },
    Lenient {
        // libyaml wants `?` before an empty key.
        name: "a value with no key",
        says: "did not find expected key",
        needs: &[':'],
        fixtures: &[": x\n"],
    },
    Lenient {
        // YAML 1.1 line breaks; YAML 1.2 (and this reader) take them as text.
        name: "NEL, LS and PS are line breaks for go-yaml",
        says: "could not find expected ':'",
        needs: &['\u{85}', '\u{2028}', '\u{2029}'],
        fixtures: &["a: x\u{2028}y\n", "a: |\n  x\u{85}y\n"],
    },
];

/// The [`LENIENT`] entry PyYAML's `error` on `text` is, if any.
fn lenient(text: &str, error: &str) -> Option<&'static str> {
    LENIENT
        .iter()
        .find(|l| error.contains(l.says) && (l.needs.is_empty() || text.contains(l.needs)))
        .map(|l| l.name)
}

/// Known differences the comparison cannot name by looking at one scalar:
/// an input showing one fails the differential tests.
const UNCLASSIFIED: &[&str] = &["a merge key after the mapping's own key"];

const KNOWN: &[Known] = &[
    Known {
        // go-yaml v2's resolve table has y, Y, n, N; PyYAML's bool regex not.
        name: "y/n booleans",
        yaml: "a: y\nb: N\n",
        go: r#"{"a": true, "b": false}"#,
        pyyaml: Some(r#"{"a": "y", "b": "N"}"#),
    },
    Known {
        // Go's strconv.ParseInt(s, 0, 64) reads the 0o prefix.
        name: "0o octal",
        yaml: "a: 0o17\nb: -0o17\n",
        go: r#"{"a": 15, "b": -15}"#,
        pyyaml: Some(r#"{"a": "0o17", "b": "-0o17"}"#),
    },
    Known {
        // go-yaml's float regex needs no dot and no exponent sign.
        name: "floats without a dot or an exponent sign",
        yaml: "a: 1e3\nb: 1.5e3\nc: 2E-2\n",
        go: r#"{"a": 1000.0, "b": 1500.0, "c": 0.02}"#,
        pyyaml: Some(r#"{"a": "1e3", "b": "1.5e3", "c": "2E-2"}"#),
    },
    Known {
        // Not an octal for either; go-yaml then tries its float regex.
        name: "leading-zero decimals are floats",
        yaml: "a: 08\nb: 0019\n",
        go: r#"{"a": 8.0, "b": 19.0}"#,
        pyyaml: Some(r#"{"a": "08", "b": "0019"}"#),
    },
    Known {
        // PyYAML's `\.[0-9]` alternative has no sign.
        name: "signed fractions",
        yaml: "a: -.5\nb: +.5\n",
        go: r#"{"a": -0.5, "b": 0.5}"#,
        pyyaml: Some(r#"{"a": "-.5", "b": "+.5"}"#),
    },
    Known {
        // go-yaml v2 dropped base 60 ("a bad idea"); PyYAML reads it.
        name: "base-60 numbers",
        yaml: "a: 1:20\nb: 1:20.5\n",
        go: r#"{"a": "1:20", "b": "1:20.5"}"#,
        pyyaml: Some(
            r#"{"a": {"\u0000": "base60", "text": "1:20", "value": 80},
                "b": {"\u0000": "base60", "text": "1:20.5", "value": 80.5}}"#,
        ),
    },
    Known {
        // go-yaml v2 resolves a timestamp but, decoding into interface{},
        // keeps the text "for backward compatibility"; PyYAML builds a date.
        name: "timestamps",
        yaml: "a: 2021-01-01\nb: 2001-12-14t21:59:43.10-05:00\n",
        go: r#"{"a": "2021-01-01", "b": "2001-12-14t21:59:43.10-05:00"}"#,
        pyyaml: Some(
            r#"{"a": {"\u0000": "timestamp", "text": "2021-01-01"},
                "b": {"\u0000": "timestamp", "text": "2001-12-14t21:59:43.10-05:00"}}"#,
        ),
    },
    Known {
        // PyYAML resolves `=` to the !!value tag it cannot construct.
        name: "a plain =",
        yaml: "a: =\n",
        go: r#"{"a": "="}"#,
        pyyaml: None,
    },
    Known {
        // `<<` outside a key: PyYAML has no constructor for !!merge there.
        name: "a plain << value",
        yaml: "a: <<\n",
        go: r#"{"a": "<<"}"#,
        pyyaml: None,
    },
    Known {
        // go-yaml cannot resolve a local tag and keeps the text; PyYAML has
        // no constructor for it.
        name: "a local tag",
        yaml: "a: !custom 12\nb: !custom [1]\n",
        go: r#"{"a": "12", "b": [1]}"#,
        pyyaml: None,
    },
    Known {
        // go-yaml's parser keeps the latest definition of an anchor; PyYAML
        // refuses a second one.
        name: "a redefined anchor",
        yaml: "a: &x 1\nb: *x\nc: &x 2\nd: *x\n",
        go: r#"{"a": 1, "b": 1, "c": 2, "d": 2}"#,
        pyyaml: None,
    },
    Known {
        // go-yaml v2 sets the merged keys where `<<` stands, over the keys
        // before it; PyYAML lets the mapping's own keys win.
        name: "a merge key after the mapping's own key",
        yaml: "a: 1\n<<: {a: 2, b: 2}\nb: 3\n",
        go: r#"{"a": 2, "b": 3}"#,
        pyyaml: Some(r#"{"a": 1, "b": 3}"#),
    },
];

/// Whether a difference between our `node` (read as `raw`) and PyYAML's
/// string `py` is one of [`KNOWN`]: the name, or `None`.
fn known_scalar(node: &Node, py: &J) -> Option<&'static str> {
    let raw = node.raw()?;
    if node.quoted {
        return None;
    }
    if let Some(tagged) = py.get(TAG).and_then(J::as_str) {
        return match (tagged, &node.value) {
            ("timestamp", Value::Str(s)) if Some(s.as_str()) == py["text"].as_str() => {
                Some("timestamps")
            }
            ("base60", Value::Str(s)) if Some(s.as_str()) == py["text"].as_str() => {
                Some("base-60 numbers")
            }
            _ => None,
        };
    }
    if py.as_str() != Some(raw) {
        return None;
    }
    let unsigned = raw.trim_start_matches(['-', '+']);
    match &node.value {
        Value::Bool(_) if matches!(raw, "y" | "Y" | "n" | "N") => Some("y/n booleans"),
        Value::Int(_) | Value::UInt(_) if unsigned.starts_with("0o") => Some("0o octal"),
        Value::Float(_) if raw.contains(['e', 'E']) => {
            Some("floats without a dot or an exponent sign")
        }
        Value::Float(_) if unsigned.starts_with('0') && !raw.contains('.') => {
            Some("leading-zero decimals are floats")
        }
        Value::Float(_) if unsigned.starts_with('.') && raw != unsigned => Some("signed fractions"),
        _ => None,
    }
}

/// Go's key for a PyYAML key (sigs.k8s.io/yaml writes non-string keys as
/// their JSON text).
fn key_of(py: &J) -> Option<String> {
    match py {
        J::String(s) => Some(s.clone()),
        J::Bool(b) => Some(b.to_string()),
        J::Number(n) => Some(n.to_string()),
        J::Null => Some("null".to_string()),
        J::Object(o) if o.get(TAG).and_then(J::as_str) == Some("timestamp") => {
            o["text"].as_str().map(str::to_string)
        }
        _ => None,
    }
}

fn number_eq(node: &Value, n: &serde_json::Number) -> bool {
    match node {
        Value::Int(i) => n.as_i64() == Some(*i) || n.as_f64() == Some(*i as f64),
        Value::UInt(u) => n.as_u64() == Some(*u),
        // go-yaml reads an integer beyond 64 bits as a float64.
        Value::Float(f) => n.as_f64() == Some(*f),
        _ => false,
    }
}

/// Differences between our `node` and PyYAML's `py`: (path, what), where
/// `what` is a [`KNOWN`] name or starts with "UNKNOWN".
fn compare(node: &Node, py: &J, path: &str, out: &mut Vec<(String, String)>) {
    let unknown = |out: &mut Vec<(String, String)>| {
        let ours = node.to_json().to_string();
        let ours: String = ours.chars().take(160).collect();
        let theirs: String = py.to_string().chars().take(160).collect();
        out.push((
            path.to_string(),
            format!(
                "UNKNOWN: ours {ours} (raw {:?}), PyYAML {theirs}",
                node.raw()
            ),
        ));
    };
    let tag = py.get(TAG).and_then(J::as_str);
    match (&node.value, py) {
        (Value::Null, J::Null) => {}
        (Value::Bool(a), J::Bool(b)) if a == b => {}
        (Value::Str(a), J::String(b)) if a == b => {}
        (v, J::Number(n)) if number_eq(v, n) => {}
        // go-yaml decodes !!binary into a string of the bytes.
        (Value::Str(a), _) if tag == Some("binary") && py["text"].as_str() == Some(a) => {}
        (Value::Float(f), _) if tag == Some("float") => {
            let want = match py["text"].as_str() {
                Some("nan") => f.is_nan(),
                Some("inf") => *f == f64::INFINITY,
                Some("-inf") => *f == f64::NEG_INFINITY,
                _ => false,
            };
            if !want {
                unknown(out);
            }
        }
        (Value::Seq(items), J::Array(theirs)) => {
            if items.len() != theirs.len() {
                return unknown(out);
            }
            for (i, (a, b)) in items.iter().zip(theirs).enumerate() {
                compare(a, b, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Map(entries), J::Object(o)) if tag.is_none() || tag == Some("map") => {
            let theirs: BTreeMap<String, &J> = if tag == Some("map") {
                let mut m = BTreeMap::new();
                for pair in o["pairs"].as_array().into_iter().flatten() {
                    match key_of(&pair[0]) {
                        Some(k) => {
                            m.insert(k, &pair[1]);
                        }
                        None => return unknown(out),
                    }
                }
                m
            } else {
                o.iter().map(|(k, v)| (k.clone(), v)).collect()
            };
            let ours: BTreeMap<&str, &Node> =
                entries.iter().map(|e| (e.key.as_str(), &e.value)).collect();
            // A plain key go-yaml resolves to a boolean is "true"/"false" in
            // Go's JSON (`y:` too); PyYAML keeps `y`, `n` as strings.
            let theirs: BTreeMap<String, &J> = theirs
                .into_iter()
                .map(|(k, v)| {
                    if !ours.contains_key(k.as_str()) && matches!(k.as_str(), "y" | "Y" | "n" | "N")
                    {
                        out.push((format!("{path}.{k}"), "y/n booleans".to_string()));
                        let b = matches!(k.as_str(), "y" | "Y");
                        (b.to_string(), v)
                    } else {
                        (k, v)
                    }
                })
                .collect();
            if ours.len() != theirs.len() || ours.keys().zip(theirs.keys()).any(|(a, b)| a != b) {
                return unknown(out);
            }
            for (k, v) in &theirs {
                compare(ours[k.as_str()], v, &format!("{path}.{k}"), out);
            }
        }
        _ => match known_scalar(node, py) {
            Some(name) => out.push((path.to_string(), name.to_string())),
            None => unknown(out),
        },
    }
}

/// Compares every input; returns the known differences seen, by name, and
/// the unknown ones (input, path, what).
fn differential(
    inputs: &[Input],
    label: impl Fn(usize) -> String,
) -> (BTreeMap<String, usize>, Vec<String>) {
    use rayon::prelude::*;
    // PyYAML reads in its process while this one reads with both cores.
    let (theirs, ours) = std::thread::scope(|s| {
        let python = s.spawn(|| pyyaml(inputs));
        let ours: Vec<_> = inputs
            .par_iter()
            .map(|input| match input {
                Input::Path(p) => {
                    yaml::parse_documents(&std::fs::read_to_string(p).expect("UTF-8 manifest"))
                }
                Input::Text(t) => yaml::parse_documents(t),
            })
            .collect();
        (python.join().expect("PyYAML thread"), ours)
    });
    let mut known = BTreeMap::new();
    let mut problems = Vec::new();
    for (i, (ours, py)) in ours.into_iter().zip(&theirs).enumerate() {
        match (ours, py) {
            (Ok(docs), Ok(py_docs)) => {
                if docs.len() != py_docs.len() {
                    problems.push(format!(
                        "{}: {} documents here, {} for PyYAML",
                        label(i),
                        docs.len(),
                        py_docs.len()
                    ));
                    continue;
                }
                let mut diffs = Vec::new();
                for (d, (doc, pd)) in docs.iter().zip(py_docs).enumerate() {
                    compare(&doc.root, pd, &format!("doc{d}"), &mut diffs);
                }
                for (path, what) in diffs {
                    if what.starts_with("UNKNOWN") {
                        problems.push(format!("{} at {path}: {what}", label(i)));
                    } else {
                        *known.entry(what).or_insert(0) += 1;
                    }
                }
            }
            (Err(e), Ok(_)) => {
                problems.push(format!("{}: PyYAML reads it, we fail: {e}", label(i)))
            }
            (Ok(_), Err(e)) if lenient(&text_of(&inputs[i]), e).is_some() => {
                let name = lenient(&text_of(&inputs[i]), e).expect("lenient");
                *known.entry(name.to_string()).or_insert(0) += 1;
            }
            (Ok(_), Err(e)) => {
                problems.push(format!("{}: we read it, PyYAML fails: {e}", label(i)))
            }
            (Err(_), Err(_)) => {
                *known.entry("both refuse".to_string()).or_insert(0) += 1;
            }
        }
    }
    (known, problems)
}

fn manifest_files() -> Vec<PathBuf> {
    let root = common::corpus().join("operators");
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(&root)
        .into_iter()
        .map(|e| e.expect("walk").into_path())
        .filter(|p| {
            let in_bundle = p
                .components()
                .any(|c| matches!(c.as_os_str().to_str(), Some("manifests") | Some("metadata")));
            let ext = p.extension().and_then(|e| e.to_str());
            in_bundle && matches!(ext, Some("yaml" | "yml")) && p.is_file()
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_manifest_reads_as_pyyaml_reads_it() {
    let files = manifest_files();
    assert!(files.len() > 5000, "{} manifests", files.len());
    let inputs: Vec<Input> = files.iter().cloned().map(Input::Path).collect();
    let root = common::corpus();
    let (known, problems) = differential(&inputs, |i| {
        files[i]
            .strip_prefix(&root)
            .unwrap_or(&files[i])
            .display()
            .to_string()
    });
    eprintln!("{} manifests; known differences: {known:?}", files.len());
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems[..problems.len().min(30)].join("\n")
    );
    assert!(!known.contains_key("both refuse"), "{known:?}");
}

#[test]
fn known_differences_hold() {
    let inputs: Vec<Input> = KNOWN.iter().map(|k| Input::Text(k.yaml.into())).collect();
    let theirs = pyyaml(&inputs);
    for (k, py) in KNOWN.iter().zip(theirs) {
        let docs = yaml::parse_documents(k.yaml).expect(k.name);
        let go: J = serde_json::from_str(k.go).expect("go JSON");
        // Numbers as Go's JSON holds them: float64 when either side is one.
        let ours = docs[0].root.to_json();
        assert!(json_eq(&ours, &go), "{}: ours {ours}, go-yaml {go}", k.name);
        match (k.pyyaml, py) {
            (Some(want), Ok(docs)) => {
                let want: J = serde_json::from_str(want).expect("PyYAML JSON");
                assert_eq!(docs[0], want, "{}: PyYAML changed", k.name);
                let mut diffs = Vec::new();
                compare(
                    &yaml::parse_documents(k.yaml).expect("parses")[0].root,
                    &docs[0],
                    "",
                    &mut diffs,
                );
                assert!(!diffs.is_empty(), "{}: no difference left", k.name);
                let named = !UNCLASSIFIED.contains(&k.name);
                assert!(
                    !named || diffs.iter().all(|(_, w)| w == k.name),
                    "{}: {diffs:?}",
                    k.name
                );
            }
            (None, Err(_)) => {}
            (want, got) => panic!("{}: PyYAML expected {want:?}, got {got:?}", k.name),
        }
    }
}

/// The reader is more lenient than go-yaml here; if it stops being so, this
/// fails and [`LENIENT`] must shrink.
#[test]
fn lenient_inputs_stay_known() {
    let cases: Vec<(&str, &str)> = LENIENT
        .iter()
        .flat_map(|l| l.fixtures.iter().map(move |t| (*t, l.name)))
        .collect();
    let inputs: Vec<Input> = cases
        .iter()
        .map(|(t, _)| Input::Text(t.to_string()))
        .collect();
    for ((text, name), py) in cases.iter().zip(pyyaml(&inputs)) {
        assert!(yaml::parse_documents(text).is_ok(), "{text:?}");
        let e = py.expect_err("PyYAML refuses it");
        assert_eq!(lenient(text, &e), Some(*name), "{text:?}: {e}");
    }
}

fn text_of(input: &Input) -> String {
    match input {
        Input::Path(p) => std::fs::read_to_string(p).expect("UTF-8 manifest"),
        Input::Text(t) => t.clone(),
    }
}

/// JSON equality with numbers compared as Go's JSON would hold them.
fn json_eq(a: &J, b: &J) -> bool {
    match (a, b) {
        (J::Number(x), J::Number(y)) => x.as_f64() == y.as_f64(),
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Multi-line scalars in every style, continued at every indentation, in
/// block and flow context.
fn scalar_variations() -> Vec<String> {
    let mut out = Vec::new();
    // (opening line, continuation lines) with `{p}` for the continuation's
    // indentation.
    let bodies: &[(&str, &[&str])] = &[
        ("\"iVBORw0KGgo", &["{p}AAAANSUhEUg==\"", ""]),
        ("\"iVBORw0KGgo", &["{p}AAAA", "{p}\""]),
        (
            "\"two  spaces ",
            &["", "{p}after a blank line \\", "{p}escaped break\""],
        ),
        (
            "\"esc \\\" \\\\ \\t \\x41 \\u00e9",
            &["{p}\\ lead \"  # comment"],
        ),
        ("'it''s", &["{p}single ''quoted''", "{p}'"]),
        ("'a", &["", "", "{p}b'"]),
        ("plain first", &["{p}plain second", "{p}third: not a key"]),
        ("plain # not a comment?", &["{p}x"]),
        ("|", &["{p}literal", "{p}  more", "", "{p}end"]),
        ("|-", &["{p}strip"]),
        ("|+", &["{p}keep", "", ""]),
        ("|2", &["{p}  indicator"]),
        (
            ">",
            &["{p}folded", "{p}line", "", "{p}  more indented", "{p}back"],
        ),
        (">-", &["{p}folded strip"]),
        ("\"tab", &["{p}\tafter tab\""]),
        ("\"", &["{p}\""]),
    ];
    let pads = [
        "", " ", "  ", "    ", "     ", "      ", "        ", "\t", "  \t",
    ];
    for (open, rest) in bodies {
        for pad in pads {
            let cont: Vec<String> = rest.iter().map(|l| l.replace("{p}", pad)).collect();
            let cont = cont.join("\n");
            // In a list item's mapping, as a CSV icon is.
            out.push(format!(
                "spec:\n  icon:\n  - base64data: {open}\n{cont}\n    mediatype: image/png\n  after: 1\n"
            ));
            // At the root.
            out.push(format!("key: {open}\n{cont}\nnext: 2\n"));
            // A sequence item.
            out.push(format!("items:\n- {open}\n{cont}\n- last\n"));
            // Inside a flow collection.
            if !open.starts_with(['|', '>']) {
                out.push(format!(
                    "flow: [{open}\n{cont}\n, x]\nm: {{k: {open}\n{cont}\n}}\n"
                ));
            }
            // Nested deeper.
            out.push(format!(
                "a:\n  b:\n    c:\n      d: {open}\n{cont}\n    e: 1\n"
            ));
        }
    }
    out
}

/// Documents, comments, anchors, merge keys, flow collections, tabs, BOM,
/// line endings and scalar resolution.
fn structure_variations() -> Vec<String> {
    let mut out: Vec<String> = [
        "a: 1\n---\nb: 2\n...\n---\n- x\n",
        "--- # comment\na: 1 # trailing\n# only a comment\nb: 'x' # after quote\n",
        "---\n---\n",
        "# nothing\n",
        "",
        "--- |\n  top literal\n",
        "base: &b {x: 1, y: [1, 2]}\nd:\n  <<: *b\n  y: 3\ne: *b\n",
        "b1: &b1 {x: 1}\nb2: &b2 {x: 2, z: 2}\nd:\n  <<: [*b1, *b2]\n  w: 0\n",
        "s: &s str\nl: [*s, *s]\nm: {*s : v}\n",
        "flow: {a: 1, b: [x, {c: d}], 'q': \"r\", e: }\n",
        "flow: [a, b,\n  c, d]\nnext: {a: 1,\n b: 2}\n",
        "json: {\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}\n",
        "{\"kind\": \"X\", \"n\": [1, 2.5, -3e2], \"s\": \"\\u00e9\"}",
        "a:\tb\nc: d\t# tab before comment\n",
        "a: 'x'\t\nb: [1,\t2]\n",
        "\u{feff}a: 1\n",
        "a: 1\r\nb: \"x\r\n  y\"\r\nc: |\r\n  z\r\n",
        "? complex key\n: value\n? [a, b]\n: seq key\n",
        "a: !!str 123\nb: !!int \"7\"\nc: !!float 1\nd: !!bool yes\ne: !!null ''\n",
        "a: ~\nb: null\nc:\nd: Null\ne: NULL\n",
        "a: yes\nb: No\nc: on\nd: OFF\ne: True\nf: FALSE\n",
        "a: 0777\nb: 0x1F\nc: 0b101\nd: -0b11\ne: 1_000\nf: +12\ng: -0\n",
        "a: 1.5\nb: .5\nc: 1.\nd: -1.5e+3\ne: .inf\nf: -.Inf\ng: .NaN\nh: 1_0.5\n",
        "a: 12345678901234567890\nb: 9223372036854775807\nc: -9223372036854775808\n",
        "a: 1.2.3\nb: v1\nc: 1-2\nd: 2021-13-01\ne: 0.3.0\nf: 1e\ng: 0x\n",
        // (Not `true` with `1`: Python's dict takes them for the same key.)
        "2: int key\ntrue: bool key\n1.5: float key\n",
        "a: \"\\N\\_\\L\\P\\e\\a\\0\"\n",
        "'single ''key''': \"double \\\"key\\\"\"\n",
        "a: b: c\n",
        "a:\n- b\n-\n- - c\n  - d\n",
        "a: -\n",
        "%YAML 1.1\n---\na: 1\n",
        "%TAG !e! tag:example.com,2000:\n---\na: 1\n",
        "key with spaces: v\n\"quoted key\": v\nk: v with: colon\nurl: http://x.y/z#frag\n",
        "a: |\n\n  leading blank\n",
        "a: >\n a\n b\n\n c\n",
        "a: \"\"\nb: ''\nc: \" \"\n",
        "a:\n  - b\n  -\tc\n",
        "a: b\t\nc: d \t \n",
        "a:\n\t\n  b: 1\n",
        "- \"x\"\n-\t'y'\n",
        "k: [a,\tb]\nl: {a:\t1}\n",
        "key:    \n  value\nother:   # comment\n  - 1\n",
        "? a\n? b\n: c\n",
        "a: !!binary aGVsbG8=\nb: !!binary |\n  aGVs\n  bG8=\n",
        "a: &anchor\nb: *anchor\n",
        "- &a\n  k: v\n- *a\n",
        "a:\n- [1, 2]: x\n",
        "a: 'multi\n\n\n  line'\n",
        "a: \"x\\\n  y\"\n",
        "a: [\n]\nb: {\n}\n",
        "top:\n  k: [a, b, {c: [d, e]},\n  f]\n",
        "s: >\n  x\n\n   y\n  z\n",
        "a:\n  |\n  text\n",
        "...\n",
        ": x\n",
        "? \n: x\n",
        "--- a: 1\n",
        "- a\n  - b\n",
        "a:\n  - b\n  c: d\n",
        "a: b\n  c: d\n",
        "a: |\n    x\n  y\n",
        "a: b\rc: d\r",
        "a: 'x'\nb: \"\\x41\\u263A\\U0001F600\"\n",
        "k: v\n# trailing comment without newline",
        "list:\n- a: 1\n  b: 2\n-   c: 3\n    d: 4\n",
        "a: x\u{2028}y\nb: \"p\u{2028}q\"\nc: 'r\u{85}s'\nd: t\u{2029}\n",
        "a: |\n  x\u{2028}y\n  z\u{85}\n",
        "--- >\n  folded\n  doc\n...\n--- 'q'\n",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Every YAML 1.1 scalar go-yaml resolves, plain.
    for s in [
        "y",
        "Y",
        "n",
        "N",
        "0o17",
        "1e3",
        "08",
        "-.5",
        "1:20",
        "2021-01-01",
        "2001-12-14 21:59:43.10",
        "0x_1F",
        "1__0",
        "+.inf",
    ] {
        out.push(format!("v: {s}\nq: '{s}'\n"));
    }
    out
}

#[test]
fn generated_variations_read_as_pyyaml_reads_them() {
    let mut texts = scalar_variations();
    texts.extend(structure_variations());
    // The same texts with CRLF line endings.
    let crlf: Vec<String> = texts.iter().map(|t| t.replace('\n', "\r\n")).collect();
    texts.extend(crlf);
    let inputs: Vec<Input> = texts.iter().cloned().map(Input::Text).collect();
    let (known, problems) = differential(&inputs, |i| format!("{:?}", texts[i]));
    eprintln!("{} texts; known differences: {known:?}", texts.len());
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems[..problems.len().min(40)].join("\n")
    );
}

/// A bundle whose CSV continues quoted scalars at column 0 (53 real bundles
/// do, in the icon's base64data): `bundle validate` reads it, with the values
/// PyYAML gives.
#[test]
fn under_indented_quoted_scalars_load() {
    let bundle = common::fixtures().join("bundles/good/under-indented-quotes");
    let csv = bundle.join("manifests/memcached-operator.clusterserviceversion.yaml");
    let (known, problems) =
        differential(&[Input::Path(csv.clone())], |_| csv.display().to_string());
    assert!(
        problems.is_empty() && known.is_empty(),
        "{problems:?} {known:?}"
    );
    let text = std::fs::read_to_string(&csv).expect("fixture");
    let docs = yaml::parse_documents(&text).expect("reads");
    let root = &docs[0].root;
    let icon = root
        .at(&olm_catalog::path!["spec", "icon", 0])
        .expect("icon");
    assert_eq!(
        icon.get("mediatype").and_then(Node::as_str),
        Some("image/png")
    );
    let data = icon.get("base64data").expect("base64data");
    assert!(data
        .as_str()
        .is_some_and(|s| s.starts_with("iVBOR") && s.ends_with("== ")));
    // Positions are those of the file: the key after the scalar, and the
    // scalar's end on the line of its closing quote.
    let key = root.locate_key(&olm_catalog::path!["spec", "icon", 0, "mediatype"]);
    let line = text
        .lines()
        .position(|l| l.contains("mediatype"))
        .expect("line") as u32
        + 1;
    assert_eq!((key.line, key.column), (line, 5));
    assert_eq!((data.span.end_line, data.span.end_column), (line - 1, 2));

    let out = std::process::Command::new(common::bin())
        .args(["bundle", "validate"])
        .arg(&bundle)
        .output()
        .expect("run olm-catalog");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("quoted scalar") && !stdout.contains("unparsable"),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

/// An error inside a padded line still points at the original column.
#[test]
fn errors_after_a_padded_scalar_keep_their_columns() {
    let text = "a:\n  b: \"x\ny\" ]\n";
    let e = yaml::parse_documents(text).expect_err("stray ]");
    let pyyaml_column = 4; // PyYAML: line 3, column 4 (1-based), at the `]`
    assert_eq!((e.span.line, e.span.column), (3, pyyaml_column), "{e}");
}
