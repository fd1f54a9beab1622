//! An event's envelope as CEL values, made once per event.

use std::collections::HashMap;
use std::sync::Arc;

/// The variables a filter sees of one event: each top-level key of its envelope, and
/// `event`, the whole envelope.
#[derive(Debug, Clone)]
pub struct Envelope {
    fields: Vec<(String, cel::Value)>,
    whole: cel::Value,
    /// Elements of its lists and entries of its objects, in all: what a macro may go through.
    pub(super) elements: usize,
}

impl Envelope {
    /// The envelope of an event as JSON text (as it is delivered); an error when it is not
    /// a JSON object.
    pub fn parse(json: &str) -> Result<Envelope, String> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
        Envelope::of(&value)
    }

    /// The envelope of an event as a JSON value (an object).
    pub fn of(value: &serde_json::Value) -> Result<Envelope, String> {
        let serde_json::Value::Object(map) = value else { return Err("not a JSON object".to_owned()) };
        let mut elements = map.len();
        let fields: Vec<(String, cel::Value)> =
            map.iter().map(|(k, v)| (k.clone(), to_cel(v, &mut elements))).collect();
        let whole: HashMap<String, cel::Value> = fields.iter().cloned().collect();
        Ok(Envelope { fields, whole: cel::Value::from(whole), elements })
    }

    /// Binds the variables in `context`.
    pub(super) fn bind(&self, context: &mut cel::Context<'_, '_>) {
        for (name, value) in &self.fields {
            context.add_variable_from_value(name.as_str(), value.clone());
        }
        context.add_variable_from_value("event", self.whole.clone());
    }
}

/// A JSON value as a CEL value: integers that fit in 64 bits signed are `int`, other
/// numbers `double`.
/// `elements` counts the elements and entries met.
fn to_cel(value: &serde_json::Value, elements: &mut usize) -> cel::Value {
    match value {
        serde_json::Value::Null => cel::Value::Null,
        serde_json::Value::Bool(b) => cel::Value::Bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => cel::Value::Int(i),
            None => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => cel::Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(items) => {
            *elements += items.len();
            cel::Value::List(Arc::new(items.iter().map(|v| to_cel(v, elements)).collect()))
        }
        serde_json::Value::Object(map) => {
            *elements += map.len();
            let map: HashMap<String, cel::Value> = map.iter().map(|(k, v)| (k.clone(), to_cel(v, elements))).collect();
            cel::Value::from(map)
        }
    }
}
