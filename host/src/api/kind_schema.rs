//! The OpenAPI schema of an object named by its `type` (a webhook's `destination`), made
//! from its kinds' field tables (`crate::kinds`) — one object per kind, `oneOf` them — so the
//! document says exactly what the domain reads, and a kind added to the registry is
//! documented with nothing written here.

use std::borrow::Cow;

use serde_json::json;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, SchemaType, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::kinds::{Field, Rule, Secret, Table};

/// A webhook's `destination` (contract §9, §10): one of the kinds of
/// `crate::destinations`.
#[derive(Debug, serde::Serialize)]
pub(crate) struct DestinationRequest;

impl PartialSchema for DestinationRequest {
    fn schema() -> RefOr<Schema> {
        one_of(
            crate::destinations::tables(),
            "Where deliveries go instead of an HTTP endpoint, by `type`. On read the webhook shows it without credentials, and its `url` shows the destination's address.",
        )
    }
}

impl ToSchema for DestinationRequest {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("DestinationRequest")
    }
}

/// `oneOf` an object per kind.
fn one_of<'a>(kinds: impl Iterator<Item = (&'a str, &'a Table)>, description: &str) -> RefOr<Schema> {
    let mut schema = OneOfBuilder::new().description(Some(description));
    for (name, table) in kinds {
        schema = schema.item(object(name, table));
    }
    Schema::OneOf(schema.build()).into()
}

/// One kind's object: its `type`, then each field of its table.
fn object(name: &str, table: &Table) -> Schema {
    let kind = ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .enum_values(Some([name]))
        .description(Some(format!("`{name}`: {}", table.label)));
    let object =
        ObjectBuilder::new().title(Some(name)).description(Some(table.help)).property("type", kind).required("type");
    Schema::Object(with_fields(object, table.fields).build())
}

/// `object` with a property per field (each required one required).
fn with_fields(mut object: ObjectBuilder, fields: &[Field]) -> ObjectBuilder {
    // (An object field — Kafka's `sasl` — is left to its kind's help: the Python client's
    // generator makes an object property's model once per request holding a destination,
    // refuses the duplicate and drops the whole kind.)
    for field in fields.iter().filter(|f| !matches!(f.rule, Rule::Object { .. })) {
        object = object.property(field.name, property(field));
        if field.required {
            object = object.required(field.name);
        }
    }
    object
}

/// A field's schema, from its rule.
fn property(field: &Field) -> Schema {
    // (A secret's help says it is sealed; a whole secret is also write-only.)
    let builder = ObjectBuilder::new()
        .description(Some(field.help))
        .write_only(Some(field.secret == Secret::Whole).filter(|w| *w));
    let builder = match field.rule {
        Rule::Text { max, .. } => builder.schema_type(SchemaType::Type(Type::String)).max_length(Some(max)),
        Rule::Url { max, .. } => builder
            .schema_type(SchemaType::Type(Type::String))
            .format(Some(SchemaFormat::Custom("uri".to_owned())))
            .max_length(Some(max)),
        Rule::Choice { values } => {
            builder.schema_type(SchemaType::Type(Type::String)).enum_values(Some(values.iter().copied()))
        }
        Rule::Flag => builder.schema_type(SchemaType::Type(Type::Boolean)),
        Rule::Object { .. } => builder.schema_type(SchemaType::Type(Type::Object)),
    };
    let builder = match field.example {
        "" => builder,
        example => builder.examples([json!(example)]),
    };
    Schema::Object(builder.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_one_object_of_its_fields() {
        let schema = serde_json::to_value(DestinationRequest::schema()).unwrap();
        let kinds = schema["oneOf"].as_array().unwrap();
        let names: Vec<&str> = kinds.iter().map(|k| k["properties"]["type"]["enum"][0].as_str().unwrap()).collect();
        assert_eq!(names, crate::destinations::names());
        let amqp = kinds.iter().find(|k| k["title"] == "amqp").unwrap();
        assert_eq!(amqp["required"], json!(["type", "url", "exchange"]));
        assert_eq!(amqp["properties"]["routing_key"]["maxLength"], 255);
        let sqs = kinds.iter().find(|k| k["title"] == "sqs").unwrap();
        assert_eq!(sqs["properties"]["secret_access_key"]["writeOnly"], true);
        assert_eq!(kinds[0]["properties"].as_object().unwrap().len(), 1, "http: nothing but its type");
    }
}
