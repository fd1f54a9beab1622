//! An event's envelope as CEL values, made once per event.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

use cel::common::types::{CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString};
use cel::common::value::Val;

/// The environment every filter compiles and runs in: CEL's standard library without
/// optional values, its macros counting their iterations (`super::macros`), and `matches`
/// run by the meter (`super::meter`).
pub(super) fn env() -> &'static Arc<cel::Env> {
    static ENV: OnceLock<Arc<cel::Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        use cel::common::types::{DYN_TYPE, STRING_TYPE};
        let mut env = cel::Env::default().with_optional_support(false).with_stdlib();
        super::macros::add(&mut env);
        // Each is declared once, on an environment that has none of them.
        let _ = env.add_overload(super::macros::TICK, "weir_tick", vec![DYN_TYPE], super::meter::tick);
        let _ = env.add_overload("matches", "weir_matches", vec![STRING_TYPE, STRING_TYPE], super::meter::matches);
        let _ = env.add_member_overload(
            "matches",
            "weir_string_matches",
            STRING_TYPE,
            vec![STRING_TYPE],
            super::meter::matches,
        );
        Arc::new(env)
    })
}

/// The variables a filter sees of one event: each top-level key of its envelope, bound
/// once in a context every filter runs in (the interpreter borrows them: an evaluation
/// copies nothing of the event), and `event`, the whole envelope, made only for a filter
/// that names it.
pub struct Envelope {
    pub(super) context: cel::Context<'static, 'static>,
    json: serde_json::Value,
    /// Elements of its lists and entries of its objects, in all: what a macro may go through.
    pub(super) elements: usize,
}

impl fmt::Debug for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Envelope").field("elements", &self.elements).finish_non_exhaustive()
    }
}

impl Envelope {
    /// The envelope of an event as JSON text (as it is delivered); an error when it is not
    /// a JSON object.
    pub fn parse(json: &str) -> Result<Envelope, String> {
        let value: serde_json::Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
        Envelope::of(value)
    }

    /// The envelope of an event as a JSON value (an object).
    pub fn of(json: serde_json::Value) -> Result<Envelope, String> {
        let serde_json::Value::Object(map) = &json else { return Err("not a JSON object".to_owned()) };
        let mut elements = map.len();
        let mut context = cel::Context::with_env(env().clone());
        for (name, value) in map {
            context.add_variable_as_val(name.as_str(), to_val(value, &mut elements));
        }
        Ok(Envelope { context, json, elements })
    }

    /// `event`, the whole envelope, as a CEL value.
    pub(super) fn whole(&self) -> Box<dyn Val> {
        to_val(&self.json, &mut 0)
    }
}

/// A JSON value as a CEL value: integers that fit in 64 bits signed are `int`, other
/// numbers `double`. `elements` counts the elements and entries met.
fn to_val(value: &serde_json::Value, elements: &mut usize) -> Box<dyn Val> {
    match value {
        serde_json::Value::Null => Box::new(CelNull),
        serde_json::Value::Bool(b) => Box::new(CelBool::from(*b)),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Box::new(CelInt::from(i)),
            None => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        serde_json::Value::String(s) => Box::new(CelString::from(s.clone())),
        serde_json::Value::Array(items) => {
            *elements += items.len();
            let items: Vec<Box<dyn Val>> = items.iter().map(|v| to_val(v, elements)).collect();
            Box::new(CelList::from(items))
        }
        serde_json::Value::Object(map) => {
            *elements += map.len();
            let map: HashMap<CelMapKey, Box<dyn Val>> =
                map.iter().map(|(k, v)| (CelMapKey::String(CelString::from(k.clone())), to_val(v, elements))).collect();
            Box::new(CelMap::from(map))
        }
    }
}
