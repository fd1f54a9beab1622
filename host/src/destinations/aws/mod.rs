//! What Amazon's destinations share (`sqs`, `sns`, `eventbridge`, `kinesis`, one module each): a region
//! and an access key (sealed with the other credentials), an optional `endpoint_url` (a
//! compatible service or an emulator; else the region's AWS endpoint), and one HTTPS request
//! per delivery signed with Signature Version 4 (`sigv4`) and sent through Weir's own HTTP
//! sender (its pools, the public-address rule on every connection, the egress proxy). An
//! error answer is a failed attempt in AWS's words (`AWS answered 400: QueueDoesNotExist:
//! …`), and so is a `2xx` that does not name what AWS made of the message.

mod common;
mod eventbridge;
mod kinesis;
mod sigv4;
mod sns;
mod sqs;

pub(crate) use self::eventbridge::EventBridge;
pub(crate) use self::kinesis::Kinesis;
pub(crate) use self::sns::Sns;
pub(crate) use self::sqs::Sqs;

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::destinations::parse;

    #[test]
    fn a_malformed_aws_destination_names_its_field() {
        let base = json!({"type": "sns", "topic_arn": "arn:aws:sns:us-east-1:123456789012:t", "region": "us-east-1",
            "access_key_id": "A", "secret_access_key": "S"});
        let with = |name: &str, value: Value| {
            let mut v = base.clone();
            v[name] = value;
            parse(&v).unwrap_err().field
        };
        assert_eq!(with("topic_arn", json!("topic")), "destination.topic_arn");
        assert_eq!(with("region", json!("US East")), "destination.region");
        assert_eq!(with("endpoint_url", json!("ftp://x")), "destination.endpoint_url");
        assert_eq!(with("endpoint_url", json!("http://k:s@x")), "destination.endpoint_url");
        assert_eq!(with("endpoint_url", json!("http://x:0")), "destination.endpoint_url");
        assert_eq!(with("secret_access_key", json!("")), "destination.secret_access_key");
        assert_eq!(with("queue_url", json!("http://x")), "destination.queue_url", "not a field of sns");
        let sqs = json!({"type": "sqs", "region": "us-east-1", "access_key_id": "a", "secret_access_key": "s"});
        assert_eq!(parse(&sqs).unwrap_err().field, "destination.queue_url");
    }
}
