//! What the producer writes and reads besides the wire: a record's produce request, the
//! partition a key hashes to (Kafka's murmur2), sequence numbers, and a broker's errors in
//! the protocol's words.

use bytes::{Bytes, BytesMut};
use kafka_protocol::error::ResponseError;
use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::{ProduceRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType};

use crate::destinations::message::SendError;

/// How long the broker may wait for the partition's replicas (`acks=all`).
const PRODUCE_TIMEOUT_MS: i32 = 5_000;

/// One record to produce.
#[derive(Debug)]
pub(super) struct Outgoing<'a> {
    pub topic: &'a str,
    pub key: Option<Bytes>,
    pub value: Bytes,
    pub headers: &'a [(String, String)],
}

/// A producer id and epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Session {
    pub id: i64,
    pub epoch: i16,
}

/// The produce request of one record: one batch of one record, `acks=all`.
pub(super) fn produce_request(
    record: &Outgoing<'_>,
    partition: i32,
    session: Session,
    sequence: i32,
) -> Result<ProduceRequest, SendError> {
    let headers: IndexMap<StrBytes, Option<Bytes>> = record
        .headers
        .iter()
        .map(|(name, value)| (StrBytes::from_string(name.clone()), Some(Bytes::from(value.clone()))))
        .collect();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let one = Record {
        transactional: false,
        control: false,
        delete_horizon: false,
        partition_leader_epoch: -1,
        producer_id: session.id,
        producer_epoch: session.epoch,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence,
        timestamp: i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        key: record.key.clone(),
        value: Some(record.value.clone()),
        headers,
    };
    let mut batch = BytesMut::new();
    let options = RecordEncodeOptions { version: 2, compression: Compression::None };
    RecordBatchEncoder::encode(&mut batch, [&one], &options)
        .map_err(|e| SendError::Request(format!("the record cannot be written: {e}")))?;
    let data = PartitionProduceData::default().with_index(partition).with_records(Some(batch.freeze()));
    let topic = TopicProduceData::default()
        .with_name(TopicName(StrBytes::from_string(record.topic.to_owned())))
        .with_partition_data(vec![data]);
    Ok(ProduceRequest::default().with_acks(-1).with_timeout_ms(PRODUCE_TIMEOUT_MS).with_topic_data(vec![topic]))
}

/// The sequence number after `n` (they wrap to zero after `i32::MAX`).
pub(super) fn next_sequence(n: i32) -> i32 {
    if n == i32::MAX { 0 } else { n + 1 }
}

/// A broker's error in its own words: the protocol's name for it (`NOT_ENOUGH_REPLICAS`),
/// what it is about, and the broker's message if it sent one.
pub(super) fn refused(error: ResponseError, message: Option<&StrBytes>, about: &str) -> SendError {
    let said = message.map(|m| format!(": {}", m.as_str())).unwrap_or_default();
    let why = match error {
        ResponseError::SaslAuthenticationFailed
        | ResponseError::TopicAuthorizationFailed
        | ResponseError::ClusterAuthorizationFailed => "the broker refused Weir's credentials",
        _ => "the broker refused",
    };
    SendError::Refused(format!("{why} ({about}): {}{said}", protocol_name(error)))
}

/// `NotEnoughReplicas` → `NOT_ENOUGH_REPLICAS`, as Kafka's documentation names errors.
fn protocol_name(error: ResponseError) -> String {
    let camel = error.to_string();
    let mut name = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
}

/// Kafka's murmur2 (its default partitioner's hash of a key).
pub(super) fn murmur2(data: &[u8]) -> i32 {
    const M: i32 = 0x5bd1_e995;
    let mut h: i32 = (0x9747_b28c_u32 as i32) ^ (data.len() as i32);
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= ((k as u32) >> 24) as i32;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let rest = chunks.remainder();
    if rest.len() >= 3 {
        h ^= i32::from(rest[2]) << 16;
    }
    if rest.len() >= 2 {
        h ^= i32::from(rest[1]) << 8;
    }
    if !rest.is_empty() {
        h ^= i32::from(rest[0]);
        h = h.wrapping_mul(M);
    }
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(M);
    h ^ ((h as u32) >> 15) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_hash_as_kafkas_own_producers_hash_them() {
        // Kafka's UtilsTest.testMurmur2.
        let cases: [(&str, i32); 6] = [
            ("21", -973_932_308),
            ("foobar", -790_332_482),
            ("a-little-bit-long-string", -985_981_536),
            ("a-little-bit-longer-string", -1_486_304_829),
            ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58_897_971),
            ("abc", 479_470_107),
        ];
        for (key, hash) in cases {
            assert_eq!(murmur2(key.as_bytes()), hash, "{key}");
        }
    }

    #[test]
    fn errors_read_in_the_protocols_words_and_sequences_wrap() {
        assert_eq!(protocol_name(ResponseError::NotEnoughReplicas), "NOT_ENOUGH_REPLICAS");
        assert_eq!(protocol_name(ResponseError::UnknownTopicOrPartition), "UNKNOWN_TOPIC_OR_PARTITION");
        let said = StrBytes::from_static_str("only 1 of 3 in sync");
        let e = refused(ResponseError::NotEnoughReplicas, Some(&said), "partition 2");
        assert_eq!(e.to_string(), "the broker refused (partition 2): NOT_ENOUGH_REPLICAS: only 1 of 3 in sync");
        assert_eq!(next_sequence(7), 8);
        assert_eq!(next_sequence(i32::MAX), 0);
    }
}
