//! A file-based catalog turned back into a catalog template, as opm
//! v1.73.0's `opm alpha convert-template basic|substitutes` does
//! (`alpha/template/converter`, `basic.FromReader`,
//! `substitutes.FromReader`).
//!
//! Every object of the FBC stream becomes an entry, in order and otherwise
//! untouched, decoded as opm decodes a `declcfg.Meta` (numbers become
//! float64s, keys sorted); a basic template keeps only each bundle's
//! `schema` and `image` (the template renders the rest again from the
//! image), a substitutes template keeps the bundles whole and starts with
//! no substitutions. The text is what opm prints: Go's `MarshalIndent`
//! with four spaces (HTML characters escaped), or that read back and
//! written as YAML after a `---` line.

use std::path::Path;

use serde_json::Value;

use super::template::Kind;
use super::Error;
use crate::fbc::{self, FbcError};

/// A template made from a catalog, in opm's field order.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvertedTemplate {
    /// The template's kind (basic or substitutes).
    pub kind: Kind,
    /// The catalog's objects; `None` when there were none (opm writes
    /// `"entries": null` then).
    pub entries: Option<Vec<Entry>>,
}

/// One entry of a converted template.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// A bundle reduced to what a basic template names: `schema` and
    /// `image` (in that order, as Go's `declcfg.Bundle` marshals them).
    BundleImage {
        /// The bundle's schema.
        schema: String,
        /// Its image reference ("" when it had none).
        image: String,
    },
    /// Any other object, as decoded.
    Object(Value),
}

/// Converts the FBC stream `text` (read from `path`, for messages) into a
/// template of `kind`. opm converts to basic and substitutes templates
/// only; a semver template is refused.
pub fn convert(kind: Kind, text: &str, path: &Path) -> Result<ConvertedTemplate, Error> {
    if kind == Kind::Semver {
        return Err(Error::Template(
            "a catalog converts to a basic or substitutes template only (as opm's alpha convert-template)"
                .to_string(),
        ));
    }
    let mut entries = Vec::new();
    fbc::for_each_object(text, path, |mut obj| {
        fbc::check_meta(&obj)?;
        crate::gojson::numbers_as_floats(&mut obj);
        let entry = match crate::gojson::struct_field(&obj, "schema") {
            Some(Value::String(s)) if kind == Kind::Basic && s == fbc::SCHEMA_BUNDLE => {
                Entry::BundleImage {
                    schema: s.clone(),
                    image: bundle_string(&obj, "image")?,
                }
            }
            _ => Entry::Object(obj),
        };
        entries.push(entry);
        Ok(())
    })?;
    Ok(ConvertedTemplate {
        kind,
        entries: (!entries.is_empty()).then_some(entries),
    })
}

/// A string field of a bundle as `declcfg.Bundle` decodes it: absent or
/// null is "", anything but a string is opm's "parse bundle" error.
fn bundle_string(obj: &Value, name: &str) -> Result<String, FbcError> {
    match crate::gojson::struct_field(obj, name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(FbcError::InvalidObject(format!(
            "parse bundle: json: cannot unmarshal {} into Go struct field Bundle.{name} of type string",
            crate::gojson::go_json_type(other)
        ))),
    }
}

const INDENT: &str = "    ";

impl ConvertedTemplate {
    /// The template as opm prints it with `-o json` (without the final
    /// newline `Println` adds).
    pub fn to_json(&self) -> String {
        use crate::gojson::to_string_indented;
        let quote = |s: &str| crate::gojson::to_string(&Value::String(s.to_string()));
        let mut out = format!("{{\n{INDENT}\"schema\": {},\n{INDENT}\"entries\": ", {
            quote(self.kind.schema())
        });
        match &self.entries {
            None => out.push_str("null"),
            Some(entries) => {
                out.push('[');
                for (i, e) in entries.iter().enumerate() {
                    out.push_str(if i > 0 { ",\n" } else { "\n" });
                    out.push_str(&INDENT.repeat(2));
                    match e {
                        Entry::Object(v) => out.push_str(&to_string_indented(v, INDENT, 2)),
                        Entry::BundleImage { schema, image } => {
                            let inner = INDENT.repeat(3);
                            out.push_str(&format!(
                                "{{\n{inner}\"schema\": {},\n{inner}\"image\": {}\n{}}}",
                                quote(schema),
                                quote(image),
                                INDENT.repeat(2)
                            ));
                        }
                    }
                }
                out.push_str(&format!("\n{INDENT}]"));
            }
        }
        if self.kind == Kind::Substitutes {
            out.push_str(&format!(",\n{INDENT}\"substitutions\": []"));
        }
        out.push_str("\n}");
        out
    }

    /// The template as opm prints it with `-o yaml`: a `---` line, then the
    /// JSON form read back and written as `sigs.k8s.io/yaml` writes it
    /// (without the final newline `Println` adds).
    pub fn to_yaml(&self) -> String {
        // Read back as go-yaml reads JSON text: numbers written without a
        // fraction or exponent are integers again.
        let value: Value = serde_json::from_str(&self.to_json()).unwrap_or(Value::Null);
        format!("---\n{}", crate::goyaml::to_string(&value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(text: &str) -> ConvertedTemplate {
        convert(Kind::Basic, text, Path::new("t.yaml")).expect("converts")
    }

    #[test]
    fn basic_keeps_schema_and_image_of_bundles_in_that_order() {
        let t =
            basic("schema: olm.bundle\nname: a.v1\npackage: a\nimage: r/a&b:1\nproperties: []\n");
        assert_eq!(
            t.to_json(),
            "{\n    \"schema\": \"olm.template.basic\",\n    \"entries\": [\n        {\n            \
\"schema\": \"olm.bundle\",\n            \"image\": \"r/a\\u0026b:1\"\n        }\n    ]\n}"
        );
    }

    #[test]
    fn no_objects_is_null_entries_and_substitutes_start_empty() {
        let t = convert(Kind::Substitutes, "", Path::new("-")).expect("converts");
        assert_eq!(
            t.to_json(),
            "{\n    \"schema\": \"olm.template.substitutes\",\n    \"entries\": null,\n    \"substitutions\": []\n}"
        );
    }

    #[test]
    fn numbers_are_float64s_and_keys_sorted() {
        let t = basic("{\"schema\":\"x\",\"b\":12345678901234567890,\"a\":{}}");
        assert_eq!(
            t.to_json(),
            "{\n    \"schema\": \"olm.template.basic\",\n    \"entries\": [\n        {\n            \
\"a\": {},\n            \"b\": 12345678901234567000,\n            \"schema\": \"x\"\n        }\n    ]\n}"
        );
        assert_eq!(
            t.to_yaml(),
            "---\nentries:\n- a: {}\n  b: 12345678901234567000\n  schema: x\nschema: olm.template.basic\n"
        );
    }

    #[test]
    fn a_bundle_image_that_is_not_a_string_is_opms_parse_error() {
        let e = convert(
            Kind::Basic,
            "schema: olm.bundle\nimage: [1]\n",
            Path::new("c.yaml"),
        )
        .expect_err("refused");
        assert!(
            e.to_string()
                .contains("parse bundle: json: cannot unmarshal array"),
            "{e}"
        );
    }
}
