//! AWS destinations: SQS `SendMessage`, SNS `Publish`, EventBridge `PutEvents`, each one HTTPS
//! request signed with Signature Version 4 (`sigv4`) and sent through Weir's own HTTP sender
//! (its pools, the public-address rule on every connection, the egress proxy). The headers an
//! HTTP subscriber gets travel as message attributes (SQS, SNS; AWS allows ten: the Standard
//! Webhooks three, Weir's own, `traceparent`, then the webhook's extra headers); EventBridge
//! has none (`Detail` is the body, `DetailType` the action, `Source` as configured, and AWS
//! authenticates the sender). On a FIFO queue or topic the event's subject id is the message
//! group and the delivery id the deduplication id.

use serde_json::{Value, json};

use super::http::Http;
use super::message::{KeySource, Message, SendError, open_credentials};
use super::sigv4::{self, Key, Request, Scope};
use crate::destinations::Spec;

/// AWS's limit on message attributes.
const MAX_ATTRIBUTES: usize = 10;

/// What AWS answered a successful request with, in words for the attempt's record.
#[derive(Debug, Clone)]
pub(crate) struct Accepted(pub String);

/// The AWS requests of a process.
#[derive(Clone)]
pub(crate) struct Aws {
    http: Http,
    secret: KeySource,
}

impl std::fmt::Debug for Aws {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aws").finish_non_exhaustive()
    }
}

/// One signed request: the service, the extra headers (`x-amz-target`, content type) and body.
struct Call {
    service: &'static str,
    content_type: &'static str,
    target: Option<&'static str>,
    body: Vec<u8>,
}

impl Aws {
    pub(crate) fn new(http: Http, secret: KeySource) -> Aws {
        Aws { http, secret }
    }

    /// Sends `message` to the AWS destination `spec`; what AWS accepted it as.
    pub(crate) async fn send(
        &self,
        spec: &Spec,
        sealed: Option<(&str, &str)>,
        message: Message<'_>,
    ) -> Result<Accepted, SendError> {
        let (sealed, context) = sealed.ok_or_else(|| SendError::Request("the destination has no access key".into()))?;
        let credentials = open_credentials(&self.secret, sealed, context)?;
        let (Some(id), Some(secret)) = (credentials.access_key_id, credentials.secret_access_key) else {
            return Err(SendError::Request("the destination has no access key".into()));
        };
        let call = call(spec, &message)?;
        let endpoint = spec.aws_endpoint();
        let url = url::Url::parse(&endpoint).map_err(|_| SendError::Request("the endpoint is damaged".into()))?;
        let host = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_owned(),
        };
        let amz_date = sigv4::amz_date(crate::time::now_millis());
        let mut signed: Vec<(&str, &str)> =
            vec![("content-type", call.content_type), ("host", &host), ("x-amz-date", &amz_date)];
        if let Some(target) = call.target {
            signed.push(("x-amz-target", target));
        }
        let region = match spec {
            Spec::Sqs { region, .. } | Spec::Sns { region, .. } | Spec::EventBridge { region, .. } => region,
            Spec::Nats { .. } | Spec::Amqp { .. } => return Err(SendError::Request("not an AWS destination".into())),
        };
        let request = Request { method: "POST", path: "/", query: "", headers: &signed, body: &call.body };
        let scope = Scope { region, service: call.service, amz_date: &amz_date };
        let authorization = sigv4::authorization(Key { id: &id, secret: &secret }, scope, &request);
        let mut headers: Vec<(String, String)> =
            signed.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        headers.push(("authorization".to_owned(), authorization));
        let sent = Message { headers: &headers, body: call.body.into() };
        let response = self.http.send(&format!("{endpoint}/"), None, sent).await?;
        accepted(spec, response.status, &response.body)
    }
}

/// The headers that travel as attributes, at most ten, the signature's first.
fn attributes<'m>(message: &'m Message<'_>) -> Vec<(&'m str, &'m str)> {
    let mut out: Vec<(&str, &str)> = message
        .headers
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "content-type" | "user-agent"))
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    out.truncate(MAX_ATTRIBUTES);
    out
}

/// The event's subject id (a FIFO message group) and the delivery id (its deduplication id).
fn fifo_ids(message: &Message<'_>) -> (String, String) {
    let body: Value = serde_json::from_slice(&message.body).unwrap_or_default();
    let group = body["subject"]["id"].as_str().unwrap_or("weir").to_owned();
    let id = message.headers.iter().find(|(n, _)| n == "webhook-id").map(|(_, v)| v.clone()).unwrap_or_default();
    (group, id)
}

fn call(spec: &Spec, message: &Message<'_>) -> Result<Call, SendError> {
    let body_text = String::from_utf8_lossy(&message.body).into_owned();
    match spec {
        Spec::Sqs { queue_url, .. } => {
            let attributes: serde_json::Map<String, Value> = attributes(message)
                .into_iter()
                .map(|(n, v)| (n.to_owned(), json!({"DataType": "String", "StringValue": v})))
                .collect();
            let mut request = json!({"QueueUrl": queue_url, "MessageBody": body_text, "MessageAttributes": attributes});
            if queue_url.ends_with(".fifo") {
                let (group, id) = fifo_ids(message);
                request["MessageGroupId"] = json!(group);
                request["MessageDeduplicationId"] = json!(id);
            }
            Ok(Call {
                service: "sqs",
                content_type: "application/x-amz-json-1.0",
                target: Some("AmazonSQS.SendMessage"),
                body: request.to_string().into_bytes(),
            })
        }
        Spec::Sns { topic_arn, .. } => {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("Action", "Publish").append_pair("Version", "2010-03-31");
            form.append_pair("TopicArn", topic_arn).append_pair("Message", &body_text);
            for (i, (name, value)) in attributes(message).into_iter().enumerate() {
                let entry = format!("MessageAttributes.entry.{}", i + 1);
                form.append_pair(&format!("{entry}.Name"), name);
                form.append_pair(&format!("{entry}.Value.DataType"), "String");
                form.append_pair(&format!("{entry}.Value.StringValue"), value);
            }
            if topic_arn.ends_with(".fifo") {
                let (group, id) = fifo_ids(message);
                form.append_pair("MessageGroupId", &group).append_pair("MessageDeduplicationId", &id);
            }
            Ok(Call {
                service: "sns",
                content_type: "application/x-www-form-urlencoded; charset=utf-8",
                target: None,
                body: form.finish().into_bytes(),
            })
        }
        Spec::EventBridge { event_bus_name, source, .. } => {
            let action: Value = serde_json::from_slice(&message.body).unwrap_or_default();
            let entry = json!({
                "EventBusName": event_bus_name,
                "Source": source,
                "DetailType": action["action"].as_str().unwrap_or("webhook"),
                "Detail": body_text,
            });
            Ok(Call {
                service: "events",
                content_type: "application/x-amz-json-1.1",
                target: Some("AWSEvents.PutEvents"),
                body: json!({"Entries": [entry]}).to_string().into_bytes(),
            })
        }
        Spec::Nats { .. } | Spec::Amqp { .. } => Err(SendError::Request("not an AWS destination".into())),
    }
}

/// What AWS's answer means: accepted (with the id it gave), or a refusal in AWS's words.
fn accepted(spec: &Spec, status: u16, body: &str) -> Result<Accepted, SendError> {
    let json: Value = serde_json::from_str(body).unwrap_or_default();
    if !(200..300).contains(&status) {
        let code =
            json["__type"].as_str().map(|t| t.rsplit('#').next().unwrap_or(t).to_owned()).or_else(|| xml(body, "Code"));
        let text =
            json["message"].as_str().or(json["Message"].as_str()).map(str::to_owned).or_else(|| xml(body, "Message"));
        return Err(SendError::Refused(format!(
            "AWS answered {status}: {}: {}",
            code.unwrap_or_else(|| "error".into()),
            text.unwrap_or_default()
        )));
    }
    // An acceptance names what AWS made of the message; without that id nothing says it was
    // taken (a proxy or an emulator answering 2xx), so it is a failed attempt.
    let unnamed = |what: &str| {
        let start: String = body.chars().take(200).collect();
        SendError::Refused(format!(
            "AWS answered {status} without {what}: the message may not have been taken ({start})"
        ))
    };
    let named = |id: Option<String>| id.filter(|id| !id.trim().is_empty());
    match spec {
        Spec::Sqs { .. } => {
            let id = named(json["MessageId"].as_str().map(str::to_owned)).ok_or_else(|| unnamed("a MessageId"))?;
            Ok(Accepted(format!("SQS MessageId {id}")))
        }
        Spec::Sns { .. } => {
            let id = named(xml(body, "MessageId")).ok_or_else(|| unnamed("a MessageId"))?;
            Ok(Accepted(format!("SNS MessageId {id}")))
        }
        _ => {
            if json["FailedEntryCount"].as_u64().unwrap_or(0) > 0 {
                let entry = &json["Entries"][0];
                return Err(SendError::Refused(format!(
                    "EventBridge refused the entry: {}: {}",
                    entry["ErrorCode"].as_str().unwrap_or("error"),
                    entry["ErrorMessage"].as_str().unwrap_or("")
                )));
            }
            let id = named(json["Entries"][0]["EventId"].as_str().map(str::to_owned))
                .ok_or_else(|| unnamed("an EventId"))?;
            Ok(Accepted(format!("EventBridge EventId {id}")))
        }
    }
}

/// The text of the first `<tag>…</tag>` of an XML answer.
fn xml(body: &str, tag: &str) -> Option<String> {
    let start = body.find(&format!("<{tag}>"))? + tag.len() + 2;
    let end = body[start..].find(&format!("</{tag}>"))? + start;
    Some(body[start..end].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_read_as_aws_writes_them() {
        let sqs = Spec::Sqs { queue_url: "q".into(), region: "r".into(), endpoint_url: None };
        assert_eq!(accepted(&sqs, 200, r#"{"MessageId":"m-1"}"#).unwrap().0, "SQS MessageId m-1");
        for nameless in ["", "{}", r#"{"MessageId":""}"#, "<html>ok</html>"] {
            let refused = accepted(&sqs, 200, nameless).unwrap_err().to_string();
            assert!(refused.starts_with("AWS answered 200 without a MessageId"), "{refused}");
        }
        let refused = accepted(&sqs, 400, r#"{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"no queue"}"#);
        assert_eq!(refused.unwrap_err().to_string(), "AWS answered 400: QueueDoesNotExist: no queue");
        let sns = Spec::Sns { topic_arn: "t".into(), region: "r".into(), endpoint_url: None };
        let ok = "<PublishResponse><PublishResult><MessageId>abc</MessageId></PublishResult></PublishResponse>";
        assert_eq!(accepted(&sns, 200, ok).unwrap().0, "SNS MessageId abc");
        assert!(accepted(&sns, 200, "<PublishResponse/>").is_err(), "no MessageId");
        let error = "<ErrorResponse><Error><Code>NotFound</Code><Message>Topic does not exist</Message></Error></ErrorResponse>";
        assert_eq!(
            accepted(&sns, 404, error).unwrap_err().to_string(),
            "AWS answered 404: NotFound: Topic does not exist"
        );
        let bus = Spec::EventBridge {
            event_bus_name: "b".into(),
            source: "s".into(),
            region: "r".into(),
            endpoint_url: None,
        };
        let failed = r#"{"FailedEntryCount":1,"Entries":[{"ErrorCode":"Throttled","ErrorMessage":"slow down"}]}"#;
        assert_eq!(
            accepted(&bus, 200, failed).unwrap_err().to_string(),
            "EventBridge refused the entry: Throttled: slow down"
        );
        assert_eq!(
            accepted(&bus, 200, r#"{"FailedEntryCount":0,"Entries":[{"EventId":"e-1"}]}"#).unwrap().0,
            "EventBridge EventId e-1"
        );
        assert!(accepted(&bus, 200, r#"{"FailedEntryCount":0,"Entries":[{}]}"#).is_err(), "no EventId");
    }
}
