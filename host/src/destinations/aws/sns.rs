//! Amazon SNS (`sns`): `Publish` to the topic, the delivery body as the message and the
//! headers an HTTP subscriber gets as message attributes (as SQS's); FIFO topics (`.fifo`) as
//! FIFO queues. The attempt succeeds when SNS names the message (`MessageId`).

use serde::{Deserialize, Serialize};

use super::common::{
    ACCESS_KEY_ID, Answered, Call, Common, ENDPOINT_URL, MAX_NAME, REGION, SECRET_ACCESS_KEY, Sender, attributes,
    endpoint_of, fifo_ids, host_of, named, text, xml,
};
use crate::destinations::kind::{Host, Kind, Parsed, SenderParts, To};
use crate::destinations::message::{Answer, Message, SendError};
use crate::kinds::{Field, Read, Refusal, Rule, Table};

/// The kind.
#[derive(Debug)]
pub(crate) struct Sns;

/// An SNS destination.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SnsSpec {
    pub topic_arn: String,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint_url: Option<String>,
}

impl Kind for Sns {
    type Spec = SnsSpec;
    type Sender = Sender;

    const TABLE: Table = Table {
        label: "an Amazon SNS topic",
        help: "Each delivery is published to the topic with the headers an HTTP endpoint gets as message attributes; it succeeds when SNS names the message.",
        fields: &[
            Field::new("topic_arn", "Topic ARN", Rule::Text { max: MAX_NAME, empty: false })
                .required()
                .example("arn:aws:sns:us-east-1:123456789012:orders")
                .help("The topic's ARN; FIFO topics (.fifo) as FIFO queues."),
            REGION,
            ENDPOINT_URL,
            ACCESS_KEY_ID,
            SECRET_ACCESS_KEY,
        ],
    };
    const SYSTEM: &'static str = "aws_sns";

    fn parse(read: &Read<'_>) -> Result<Parsed<SnsSpec>, Refusal> {
        let Common { region, endpoint_url, credentials } = Common::read(read)?;
        let topic_arn = text(read, "topic_arn");
        if !topic_arn.starts_with("arn:") || topic_arn.split(':').count() < 6 {
            let why = "must be the topic's ARN (arn:aws:sns:<region>:<account>:<name>)";
            return Err(read.refuse("topic_arn", why));
        }
        Ok(Parsed { spec: SnsSpec { topic_arn, region, endpoint_url }, credentials: Some(credentials) })
    }

    fn address(spec: &SnsSpec) -> &str {
        &spec.topic_arn
    }

    fn target(spec: &SnsSpec) -> &str {
        &spec.topic_arn
    }

    fn host(spec: &SnsSpec) -> Host {
        host_of("sns", &spec.region, spec.endpoint_url.as_deref())
    }

    fn sender(parts: &SenderParts) -> Sender {
        Sender::of(parts)
    }

    async fn send<'a>(sender: &'a Sender, to: To<'a, SnsSpec>, message: Message<'a>) -> Result<Answer, SendError> {
        let spec = to.spec;
        // (Built before any await: the serializer is not `Send`.)
        let body = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("Action", "Publish").append_pair("Version", "2010-03-31");
            form.append_pair("TopicArn", &spec.topic_arn)
                .append_pair("Message", &String::from_utf8_lossy(&message.body));
            for (i, (name, value)) in attributes(&message).into_iter().enumerate() {
                let entry = format!("MessageAttributes.entry.{}", i + 1);
                form.append_pair(&format!("{entry}.Name"), name);
                form.append_pair(&format!("{entry}.Value.DataType"), "String");
                form.append_pair(&format!("{entry}.Value.StringValue"), value);
            }
            if spec.topic_arn.ends_with(".fifo") {
                let (group, id) = fifo_ids(&message);
                form.append_pair("MessageGroupId", &group).append_pair("MessageDeduplicationId", &id);
            }
            form.finish()
        };
        let call = Call {
            service: "sns",
            region: &spec.region,
            endpoint: endpoint_of("sns", &spec.region, spec.endpoint_url.as_deref()),
            content_type: "application/x-www-form-urlencoded; charset=utf-8",
            target: None,
            body: body.into_bytes(),
        };
        accepted(&sender.call(call, to.sealed).await?)
    }
}

/// What SNS's answer means.
fn accepted(answered: &Answered) -> Result<Answer, SendError> {
    if let Some(refusal) = answered.refusal() {
        return Err(refusal);
    }
    let id = named(xml(&answered.body, "MessageId")).ok_or_else(|| answered.unnamed("a MessageId"))?;
    Ok(Answer::ack(format!("SNS MessageId {id}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_sns_writes_them() {
        let answer = |status, body: &str| accepted(&Answered { status, body: body.to_owned() });
        let ok = "<PublishResponse><PublishResult><MessageId>abc</MessageId></PublishResult></PublishResponse>";
        assert_eq!(answer(200, ok).unwrap().body(), "SNS MessageId abc");
        assert!(answer(200, "<PublishResponse/>").is_err(), "no MessageId");
        let error = "<ErrorResponse><Error><Code>NotFound</Code><Message>Topic does not exist</Message></Error></ErrorResponse>";
        assert_eq!(answer(404, error).unwrap_err().to_string(), "AWS answered 404: NotFound: Topic does not exist");
    }
}
