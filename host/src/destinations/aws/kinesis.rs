//! Amazon Kinesis Data Streams (`kinesis`): `PutRecord` of one record per delivery — its
//! data the delivery body, its partition key the event's subject id (`"partition_key":
//! "subject"`, the default: one record's events land on one shard, in order) or the event's
//! id (`"event"`). A record carries no headers: AWS authenticates the sender instead of a
//! signature. The attempt succeeds when Kinesis names the shard and sequence number.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::common::{
    ACCESS_KEY_ID, Answered, Call, Common, ENDPOINT_URL, REGION, SECRET_ACCESS_KEY, Sender, delivery_id, endpoint_of,
    host_of, named, text,
};
use crate::destinations::kind::{Host, Kind, Parsed, SenderParts, To};
use crate::destinations::message::{Answer, Message, SendError};
use crate::kinds::{Field, Read, Refusal, Rule, Table};

/// The kind.
#[derive(Debug)]
pub(crate) struct Kinesis;

/// What a record's partition key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PartitionKey {
    /// The event's subject id.
    Subject,
    /// The event's id.
    Event,
}

/// A Kinesis destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct KinesisSpec {
    pub stream_name: String,
    pub partition_key: PartitionKey,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_url: Option<String>,
}

/// Kinesis's limit on a partition key (Unicode characters).
const MAX_PARTITION_KEY: usize = 256;

impl Kind for Kinesis {
    type Spec = KinesisSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "an Amazon Kinesis data stream",
        help: "Each delivery is one record: its data the body, its partition key the event's subject (or id); it succeeds when Kinesis names the shard and sequence number.",
        fields: &[
            Field::new("stream_name", "Stream", Rule::Text { max: 128, empty: false })
                .required()
                .example("orders")
                .help("The data stream's name: letters, digits, '_', '-' and '.'."),
            Field::new("partition_key", "Partition key", Rule::Text { max: 16, empty: true }).example("subject").help(
                "subject (the default: a record's events stay on one shard, in order) or event (the event's id).",
            ),
            REGION,
            ENDPOINT_URL,
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
        ],
    };
    const SYSTEM: &'static str = "aws_kinesis";

    fn parse(read: &Read<'_>) -> Result<Parsed<KinesisSpec>, Refusal> {
        let Common { region, endpoint_url, credentials } = Common::read(read)?;
        let stream_name = text(read, "stream_name");
        if !stream_name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
            return Err(read.refuse("stream_name", "must be letters, digits, '_', '-' or '.'"));
        }
        let partition_key = match text(read, "partition_key").as_str() {
            "" | "subject" => PartitionKey::Subject,
            "event" => PartitionKey::Event,
            _ => return Err(read.refuse("partition_key", "must be subject or event")),
        };
        let spec = KinesisSpec { stream_name, partition_key, region, endpoint_url };
        Ok(Parsed { spec, credentials: Some(credentials) })
    }

    fn address(spec: &KinesisSpec) -> &str {
        &spec.stream_name
    }

    fn target(spec: &KinesisSpec) -> &str {
        &spec.stream_name
    }

    fn host(spec: &KinesisSpec) -> Host {
        host_of("kinesis", &spec.region, spec.endpoint_url.as_deref())
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender::of(parts)
    }

    async fn send<'a>(sender: &'a Sender, to: To<'a, KinesisSpec>, message: Message<'a>) -> Result<Answer, SendError> {
        let spec = to.spec;
        let record = json!({
            "StreamName": spec.stream_name,
            "Data": base64::engine::general_purpose::STANDARD.encode(&message.body),
            "PartitionKey": partition_key(spec.partition_key, &message),
        });
        let call = Call {
            service: "kinesis",
            region: &spec.region,
            endpoint: endpoint_of("kinesis", &spec.region, spec.endpoint_url.as_deref()),
            content_type: "application/x-amz-json-1.1",
            target: Some("Kinesis_20131202.PutRecord"),
            body: record.to_string().into_bytes(),
        };
        accepted(&sender.call(call, to.sealed).await?)
    }
}

/// A delivery's partition key: the envelope's subject id or event id — else (a body a plugin
/// or a provider shaped otherwise) the delivery id — cut to Kinesis's limit.
fn partition_key(key: PartitionKey, message: &Message<'_>) -> String {
    let body: Value = serde_json::from_slice(&message.body).unwrap_or_default();
    let named = match key {
        PartitionKey::Subject => body["subject"]["id"].as_str(),
        PartitionKey::Event => body["id"].as_str(),
    };
    let chosen = named.filter(|k| !k.is_empty()).or_else(|| delivery_id(message)).unwrap_or("weir");
    chosen.chars().take(MAX_PARTITION_KEY).collect()
}

/// What Kinesis's answer means.
fn accepted(answered: &Answered) -> Result<Answer, SendError> {
    if let Some(refusal) = answered.refusal() {
        return Err(refusal);
    }
    let json: Value = serde_json::from_str(&answered.body).unwrap_or_default();
    let shard = named(json["ShardId"].as_str().map(str::to_owned));
    let sequence = named(json["SequenceNumber"].as_str().map(str::to_owned));
    let (Some(shard), Some(sequence)) = (shard, sequence) else {
        return Err(answered.unnamed("a ShardId and SequenceNumber"));
    };
    Ok(Answer::ack(format!("Kinesis shard {shard} sequence {sequence}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::destinations::{Spec, parse};

    #[test]
    fn a_kinesis_destination_reads_its_partition_key_and_names_its_field_when_wrong() {
        let base = json!({"type": "kinesis", "stream_name": "orders", "region": "eu-west-1",
            "access_key_id": "A", "secret_access_key": "S"});
        let parsed = parse(&base).unwrap().unwrap();
        let Spec::Kinesis(spec) = &parsed.spec else { panic!("{:?}", parsed.spec) };
        assert_eq!(spec.partition_key, PartitionKey::Subject, "the default");
        assert_eq!(parsed.spec.host().name, "kinesis.eu-west-1.amazonaws.com");
        let with = |name: &str, value: serde_json::Value| {
            let mut v = base.clone();
            v[name] = value;
            parse(&v).map(|p| p.map(|p| p.spec))
        };
        let Ok(Some(Spec::Kinesis(by_event))) = with("partition_key", json!("event")) else { panic!("event") };
        assert_eq!(by_event.partition_key, PartitionKey::Event);
        assert_eq!(with("partition_key", json!("random")).unwrap_err().field, "destination.partition_key");
        assert_eq!(with("stream_name", json!("my stream")).unwrap_err().field, "destination.stream_name");
        assert_eq!(with("stream_name", json!("")).unwrap_err().field, "destination.stream_name");
    }

    #[test]
    fn a_records_key_is_its_subject_or_its_event_else_its_delivery() {
        let headers = vec![("webhook-id".to_owned(), "dlv_1".to_owned())];
        let of = |body: &str, key| {
            partition_key(key, &Message { headers: &headers, body: bytes::Bytes::from(body.to_owned()) })
        };
        let envelope = r#"{"id":"evt_1","subject":{"type":"WorkOrder","id":"wo_7"}}"#;
        assert_eq!(of(envelope, PartitionKey::Subject), "wo_7");
        assert_eq!(of(envelope, PartitionKey::Event), "evt_1");
        assert_eq!(of("plain text from a plugin", PartitionKey::Subject), "dlv_1");
        let long = format!(r#"{{"subject":{{"id":"{}"}}}}"#, "é".repeat(300));
        assert_eq!(of(&long, PartitionKey::Subject).chars().count(), 256);
    }

    #[test]
    fn answers_read_as_kinesis_writes_them() {
        let answer = |status, body: &str| accepted(&Answered { status, body: body.to_owned() });
        let ok = r#"{"ShardId":"shardId-000000000001","SequenceNumber":"4963"}"#;
        assert_eq!(answer(200, ok).unwrap().body(), "Kinesis shard shardId-000000000001 sequence 4963");
        assert!(answer(200, r#"{"ShardId":"shardId-0"}"#).is_err(), "no sequence number");
        let missing = r#"{"__type":"ResourceNotFoundException","message":"Stream orders not found"}"#;
        assert_eq!(
            answer(400, missing).unwrap_err().to_string(),
            "AWS answered 400: ResourceNotFoundException: Stream orders not found"
        );
    }
}
