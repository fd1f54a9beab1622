//! Amazon EventBridge (`eventbridge`): `PutEvents` of one entry to the bus — `Detail` the
//! delivery body, `DetailType` the action, `Source` as configured. EventBridge carries no
//! attributes: AWS authenticates the sender instead of a signature. A failed entry is a failed
//! attempt; the attempt succeeds when EventBridge names the entry (`EventId`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::{
    ACCESS_KEY_ID, Answered, Call, Common, ENDPOINT_URL, MAX_NAME, REGION, SECRET_ACCESS_KEY, Sender, endpoint_of,
    host_of, named, text,
};
use crate::destinations::kind::{Host, Kind, Parsed, SenderParts, To};
use crate::destinations::message::{Answer, Message, SendError};
use crate::kinds::{Field, Read, Refusal, Rule, Table};

/// The kind.
#[derive(Debug)]
pub(crate) struct EventBridge;

/// An EventBridge destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EventBridgeSpec {
    pub event_bus_name: String,
    pub source: String,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_url: Option<String>,
}

impl Kind for EventBridge {
    type Spec = EventBridgeSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "an Amazon EventBridge bus",
        help: "Each delivery is one event on the bus: Detail the body, DetailType the action, Source as given; it succeeds when EventBridge names the entry.",
        fields: &[
            Field::new("event_bus_name", "Event bus", Rule::Text { max: MAX_NAME, empty: false })
                .required()
                .example("default")
                .help("The bus's name or ARN."),
            Field::new("source", "Source", Rule::Text { max: MAX_NAME, empty: false })
                .required()
                .example("com.example.weir")
                .help("The events' Source."),
            REGION,
            ENDPOINT_URL,
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
        ],
    };
    const SYSTEM: &'static str = "aws_eventbridge";

    fn parse(read: &Read<'_>) -> Result<Parsed<EventBridgeSpec>, Refusal> {
        let Common { region, endpoint_url, credentials } = Common::read(read)?;
        let (event_bus_name, source) = (text(read, "event_bus_name"), text(read, "source"));
        if source.chars().any(char::is_control) {
            return Err(read.refuse("source", "must not contain control characters"));
        }
        let spec = EventBridgeSpec { event_bus_name, source, region, endpoint_url };
        Ok(Parsed { spec, credentials: Some(credentials) })
    }

    fn address(spec: &EventBridgeSpec) -> &str {
        &spec.event_bus_name
    }

    fn target(spec: &EventBridgeSpec) -> &str {
        &spec.event_bus_name
    }

    fn host(spec: &EventBridgeSpec) -> Host {
        host_of("events", &spec.region, spec.endpoint_url.as_deref())
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender::of(parts)
    }

    async fn send<'a>(
        sender: &'a Sender,
        to: To<'a, EventBridgeSpec>,
        message: Message<'a>,
    ) -> Result<Answer, SendError> {
        let spec = to.spec;
        let envelope: Value = serde_json::from_slice(&message.body).unwrap_or_default();
        let entry = json!({
            "EventBusName": spec.event_bus_name,
            "Source": spec.source,
            "DetailType": envelope["action"].as_str().unwrap_or("webhook"),
            "Detail": String::from_utf8_lossy(&message.body),
        });
        let call = Call {
            service: "events",
            region: &spec.region,
            endpoint: endpoint_of("events", &spec.region, spec.endpoint_url.as_deref()),
            content_type: "application/x-amz-json-1.1",
            target: Some("AWSEvents.PutEvents"),
            body: json!({"Entries": [entry]}).to_string().into_bytes(),
        };
        accepted(&sender.call(call, to.sealed).await?)
    }
}

/// What EventBridge's answer means.
fn accepted(answered: &Answered) -> Result<Answer, SendError> {
    if let Some(refusal) = answered.refusal() {
        return Err(refusal);
    }
    let json: Value = serde_json::from_str(&answered.body).unwrap_or_default();
    if json["FailedEntryCount"].as_u64().unwrap_or(0) > 0 {
        let entry = &json["Entries"][0];
        return Err(SendError::Refused(format!(
            "EventBridge refused the entry: {}: {}",
            entry["ErrorCode"].as_str().unwrap_or("error"),
            entry["ErrorMessage"].as_str().unwrap_or("")
        )));
    }
    let id = named(json["Entries"][0]["EventId"].as_str().map(str::to_owned))
        .ok_or_else(|| answered.unnamed("an EventId"))?;
    Ok(Answer::ack(format!("EventBridge EventId {id}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::destinations::parse;

    #[test]
    fn an_eventbridge_destination_names_the_regions_endpoint() {
        let bus = parse(&json!({"type": "eventbridge", "event_bus_name": "default", "source": "acme.weir",
            "region": "us-east-1", "access_key_id": "A", "secret_access_key": "S"}))
        .unwrap()
        .unwrap();
        let host = bus.spec.host();
        assert_eq!(
            (host.name.as_str(), host.port, host.field),
            ("events.us-east-1.amazonaws.com", 443, "destination.region")
        );
    }

    #[test]
    fn answers_read_as_eventbridge_writes_them() {
        let answer = |body: &str| accepted(&Answered { status: 200, body: body.to_owned() });
        let failed = r#"{"FailedEntryCount":1,"Entries":[{"ErrorCode":"Throttled","ErrorMessage":"slow down"}]}"#;
        assert_eq!(answer(failed).unwrap_err().to_string(), "EventBridge refused the entry: Throttled: slow down");
        let ok = r#"{"FailedEntryCount":0,"Entries":[{"EventId":"e-1"}]}"#;
        assert_eq!(answer(ok).unwrap().body(), "EventBridge EventId e-1");
        assert!(answer(r#"{"FailedEntryCount":0,"Entries":[{}]}"#).is_err(), "no EventId");
    }
}
