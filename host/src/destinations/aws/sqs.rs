//! Amazon SQS (`sqs`): `SendMessage` to the queue, the delivery body as the message and the
//! headers an HTTP subscriber gets as message attributes (ten at most: the Standard Webhooks
//! three, Weir's own, `traceparent`, then the webhook's extra headers). On a FIFO queue
//! (`.fifo`) the event's subject id is the message group and the delivery id the
//! deduplication id. The attempt succeeds when SQS names the message (`MessageId`).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use url::Url;

use super::common::{
    ACCESS_KEY_ID, Answered, Call, Common, ENDPOINT_URL, MAX_NAME, REGION, SECRET_ACCESS_KEY, Sender, attributes,
    endpoint_of, fifo_ids, host_of, named, text,
};
use crate::destinations::kind::{Host, Kind, Parsed, SenderParts, To};
use crate::destinations::message::{Answer, Message, SendError};
use crate::kinds::{Field, Read, Refusal, Rule, Table};

/// The kind.
#[derive(Debug)]
pub(crate) struct Sqs;

/// An SQS destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SqsSpec {
    pub queue_url: String,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_url: Option<String>,
}

impl Kind for Sqs {
    type Spec = SqsSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "an Amazon SQS queue",
        help: "Each delivery is sent to the queue with the headers an HTTP endpoint gets as message attributes; it succeeds when SQS names the message.",
        fields: &[
            Field::new("queue_url", "Queue URL", Rule::Url { schemes: &["https", "http"], max: MAX_NAME })
                .required()
                .example("https://sqs.us-east-1.amazonaws.com/123456789012/orders")
                .help("The queue's URL; a .fifo queue gets the event's subject id as message group and the delivery id as deduplication id."),
            REGION,
            ENDPOINT_URL,
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
        ],
    };
    const SYSTEM: &'static str = "aws_sqs";

    fn parse(read: &Read<'_>) -> Result<Parsed<SqsSpec>, Refusal> {
        let Common { region, endpoint_url, credentials } = Common::read(read)?;
        let queue_url = text(read, "queue_url");
        match Url::parse(&queue_url) {
            Ok(u) if u.host_str().is_some() && u.port() != Some(0) => {}
            _ => {
                let why = "must be the queue's URL (https://sqs.<region>.amazonaws.com/<account>/<name>)";
                return Err(read.refuse("queue_url", why));
            }
        }
        Ok(Parsed { spec: SqsSpec { queue_url, region, endpoint_url }, credentials: Some(credentials) })
    }

    fn address(spec: &SqsSpec) -> &str {
        &spec.queue_url
    }

    fn target(spec: &SqsSpec) -> &str {
        &spec.queue_url
    }

    fn host(spec: &SqsSpec) -> Host {
        host_of("sqs", &spec.region, spec.endpoint_url.as_deref())
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender::of(parts)
    }

    async fn send<'a>(sender: &'a Sender, to: To<'a, SqsSpec>, message: Message<'a>) -> Result<Answer, SendError> {
        let spec = to.spec;
        let attributes: serde_json::Map<String, Value> = attributes(&message)
            .into_iter()
            .map(|(n, v)| (n.to_owned(), json!({"DataType": "String", "StringValue": v})))
            .collect();
        let body = String::from_utf8_lossy(&message.body);
        let mut request = json!({"QueueUrl": spec.queue_url, "MessageBody": body, "MessageAttributes": attributes});
        if spec.queue_url.ends_with(".fifo") {
            let (group, id) = fifo_ids(&message);
            request["MessageGroupId"] = json!(group);
            request["MessageDeduplicationId"] = json!(id);
        }
        let call = Call {
            service: "sqs",
            region: &spec.region,
            endpoint: endpoint_of("sqs", &spec.region, spec.endpoint_url.as_deref()),
            content_type: "application/x-amz-json-1.0",
            target: Some("AmazonSQS.SendMessage"),
            body: request.to_string().into_bytes(),
        };
        accepted(&sender.call(call, to.sealed).await?)
    }
}

/// What SQS's answer means.
fn accepted(answered: &Answered) -> Result<Answer, SendError> {
    if let Some(refusal) = answered.refusal() {
        return Err(refusal);
    }
    let json: Value = serde_json::from_str(&answered.body).unwrap_or_default();
    let id = named(json["MessageId"].as_str().map(str::to_owned)).ok_or_else(|| answered.unnamed("a MessageId"))?;
    Ok(Answer::ack(format!("SQS MessageId {id}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::destinations::{Spec, parse};

    #[test]
    fn an_sqs_destination_keeps_its_key_apart_and_names_its_endpoint() {
        let parsed = parse(&json!({"type": "sqs", "queue_url": "http://127.0.0.1:5000/123456789012/orders.fifo",
            "region": "eu-west-1", "access_key_id": "AKID", "secret_access_key": "SECRET", "endpoint_url": "http://127.0.0.1:5000/"}))
        .unwrap()
        .unwrap();
        let Spec::Sqs(spec) = &parsed.spec else { panic!("{:?}", parsed.spec) };
        assert_eq!(spec.endpoint_url.as_deref(), Some("http://127.0.0.1:5000"));
        assert_eq!((parsed.spec.host().name.as_str(), parsed.spec.host().port), ("127.0.0.1", 5000));
        assert_eq!(parsed.credentials.unwrap().get("secret_access_key"), Some("SECRET"));
        let shown = serde_json::to_value(&parsed.spec).unwrap().to_string();
        assert!(!shown.contains("SECRET") && !shown.contains("AKID"), "{shown}");
        assert!(shown.contains(r#""type":"sqs""#), "{shown}");
    }

    #[test]
    fn answers_read_as_sqs_writes_them() {
        let answer = |status, body: &str| accepted(&Answered { status, body: body.to_owned() });
        assert_eq!(answer(200, r#"{"MessageId":"m-1"}"#).unwrap().body(), "SQS MessageId m-1");
        for nameless in ["", "{}", r#"{"MessageId":""}"#, "<html>ok</html>"] {
            let refused = answer(200, nameless).unwrap_err().to_string();
            assert!(refused.starts_with("AWS answered 200 without a MessageId"), "{refused}");
        }
        let refused = answer(400, r#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"no queue"}"#);
        assert_eq!(refused.unwrap_err().to_string(), "AWS answered 400: QueueDoesNotExist: no queue");
    }
}
