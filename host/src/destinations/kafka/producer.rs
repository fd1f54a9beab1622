//! An idempotent producer for one cluster and credentials, shared by every webhook that
//! names them: the topics' partition leaders from the cluster's metadata, one connection per
//! broker (each broker the metadata names held to the public-address rule before Weir
//! connects to it), one producer id from `InitProducerId`, and per partition the sequence
//! number of its next record.
//!
//! A record is produced with `acks=all` and its partition's sequence number, one at a time
//! per partition (so a partition's records are written in the order they were sent). When a
//! connection closes with a record sent but not answered, the same record (same producer id,
//! same sequence) is sent again on a new connection until the broker answers: a broker that
//! had written it answers a duplicate, not a second copy. If the attempt gives up first (its
//! timeout), the record's fate is unknown, and the next record of that partition takes a new
//! producer id — it cannot reuse a sequence number the broker may hold, which would make it
//! a "duplicate" of another record. A retried delivery may then be written twice: at least
//! once, never lost.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
use kafka_protocol::messages::{InitProducerIdRequest, MetadataRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::record::{Outgoing, Session, murmur2, next_sequence, produce_request, refused};
use super::sasl::{Login, sign_in};
use super::wire::{Wire, WireError};
use crate::destinations::message::SendError;
use crate::netguard::UrlRule;

/// How long metadata is trusted before it is asked again (also asked after a broker says
/// it no longer leads a partition).
const METADATA_FRESH: Duration = Duration::from_secs(60);
/// The longest pause between tries of a record whose connection closed.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Versions spoken (each supported by Kafka since 2.5, and by tansu; `InitProducerId` v4
/// because tansu reads the producer id and epoch that only v3 and later carry).
const METADATA_V: i16 = 8;
const INIT_PRODUCER_ID_V: i16 = 4;
const PRODUCE_V: i16 = 8;

/// Where a cluster is and how Weir reaches it.
#[derive(Debug, Clone)]
pub(super) struct Cluster {
    pub bootstrap: Vec<(String, u16)>,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    pub login: Option<Login>,
    pub rule: UrlRule,
}

/// Where the broker wrote a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Written {
    pub partition: i32,
    pub offset: i64,
    /// The broker had it already (a record sent again after its connection closed).
    pub duplicate: bool,
}

/// A partition's next sequence number, for the session it belongs to.
#[derive(Debug)]
struct Sequence {
    session: Option<Session>,
    next: i32,
    /// A record was sent and its answer never read: its sequence number may be taken.
    unsure: bool,
}

/// A topic's partitions: each one's leader (a broker's node id; `-1`: none now).
#[derive(Debug)]
struct Topic {
    leaders: Vec<i32>,
    read: Instant,
}

#[derive(Debug, Default)]
struct State {
    brokers: HashMap<i32, (String, u16)>,
    topics: HashMap<String, Arc<Topic>>,
    wires: HashMap<(String, u16), Arc<Wire>>,
    sequences: HashMap<(String, i32), Arc<tokio::sync::Mutex<Sequence>>>,
}

/// The producer of one cluster and credentials.
#[derive(Debug)]
pub(crate) struct Producer {
    cluster: Cluster,
    state: Mutex<State>,
    session: tokio::sync::Mutex<Option<Session>>,
    round_robin: AtomicU32,
}

impl Producer {
    pub(super) fn new(cluster: Cluster) -> Producer {
        Producer {
            cluster,
            state: Mutex::default(),
            session: tokio::sync::Mutex::new(None),
            round_robin: AtomicU32::new(0),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Produces `record` and waits for the broker to write it on every in-sync replica.
    pub(super) async fn produce(&self, record: Outgoing<'_>) -> Result<Written, SendError> {
        let topic = self.topic(record.topic).await?;
        let partition = self.partition_for(record.key.as_deref(), topic.leaders.len());
        let leader = topic.leaders[partition as usize];
        let address = self.state().brokers.get(&leader).cloned();
        let Some((host, port)) = address.filter(|_| leader >= 0) else {
            self.forget_topic(record.topic);
            return Err(refused(ResponseError::LeaderNotAvailable, None, &format!("partition {partition}")));
        };
        let sequence = self.sequence_of(record.topic, partition);
        let mut sequence = sequence.lock().await;
        if sequence.unsure {
            // The last record's fate is unknown: its sequence number may be the broker's.
            self.renew(sequence.session).await;
            sequence.unsure = false;
        }
        let wire = self.wire(&host, port).await?;
        let session = self.session(&wire).await?;
        if sequence.session != Some(session) {
            *sequence = Sequence { session: Some(session), next: 0, unsure: false };
        }
        let request = produce_request(&record, partition, session, sequence.next)?;
        sequence.unsure = true;
        let mut backoff = Duration::from_millis(100);
        let mut wire = wire;
        let answer = loop {
            match wire.call(&request, PRODUCE_V).await {
                Ok(answer) => break answer,
                Err(WireError::Gone(_)) => {
                    // Sent, perhaps written: the same record again, on a new connection.
                    self.forget_wire(&host, port, &wire);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    if let Ok(again) = self.wire(&host, port).await {
                        wire = again;
                    }
                }
                Err(e @ WireError::Encode(_)) => {
                    sequence.unsure = false;
                    return Err(e.into_send());
                }
                Err(e @ WireError::Decode(_)) => return Err(e.into_send()),
            }
        };
        sequence.unsure = false;
        self.settle(&answer, record.topic, partition, session, &mut sequence).await
    }

    /// What the broker's answer to a produce means, for the partition's sequence and the
    /// producer id.
    async fn settle(
        &self,
        answer: &kafka_protocol::messages::ProduceResponse,
        topic: &str,
        partition: i32,
        session: Session,
        sequence: &mut Sequence,
    ) -> Result<Written, SendError> {
        let (error, message, offset) = answer
            .responses
            .first()
            .and_then(|t| t.partition_responses.first())
            .map(|p| (p.error_code, p.error_message.clone(), p.base_offset))
            .unwrap_or((ResponseError::UnknownServerError.code(), None, -1));
        let written = |duplicate| Written { partition, offset, duplicate };
        match ResponseError::try_from_code(error) {
            None => {
                sequence.next = next_sequence(sequence.next);
                Ok(written(false))
            }
            Some(ResponseError::DuplicateSequenceNumber) => {
                sequence.next = next_sequence(sequence.next);
                Ok(written(true))
            }
            Some(
                e @ (ResponseError::OutOfOrderSequenceNumber
                | ResponseError::UnknownProducerId
                | ResponseError::InvalidProducerEpoch),
            ) => {
                self.renew(Some(session)).await;
                Err(refused(e, message.as_ref(), &format!("partition {partition}")))
            }
            Some(
                e @ (ResponseError::NotLeaderOrFollower
                | ResponseError::LeaderNotAvailable
                | ResponseError::UnknownTopicOrPartition),
            ) => {
                self.forget_topic(topic);
                Err(refused(e, message.as_ref(), &format!("partition {partition}")))
            }
            Some(e) => Err(refused(e, message.as_ref(), &format!("partition {partition}"))),
        }
    }

    /// The partition of a record: by its key as Kafka's own producers choose it (murmur2), so
    /// other producers of the same key write to the same partition; without one, in turn.
    fn partition_for(&self, key: Option<&[u8]>, partitions: usize) -> i32 {
        let count = partitions.max(1) as u32;
        let hash = match key {
            Some(key) => (murmur2(key) & 0x7fff_ffff) as u32,
            None => self.round_robin.fetch_add(1, Ordering::Relaxed),
        };
        (hash % count) as i32
    }

    fn sequence_of(&self, topic: &str, partition: i32) -> Arc<tokio::sync::Mutex<Sequence>> {
        let mut state = self.state();
        let entry = state.sequences.entry((topic.to_owned(), partition));
        entry
            .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(Sequence { session: None, next: 0, unsure: false })))
            .clone()
    }

    /// The producer id, asked for once (and again after [`Producer::renew`]).
    async fn session(&self, wire: &Wire) -> Result<Session, SendError> {
        let mut session = self.session.lock().await;
        if let Some(session) = *session {
            return Ok(session);
        }
        let request = InitProducerIdRequest::default()
            .with_transaction_timeout_ms(60_000)
            .with_producer_id(kafka_protocol::messages::ProducerId(-1))
            .with_producer_epoch(-1);
        let answer = wire.call(&request, INIT_PRODUCER_ID_V).await.map_err(WireError::into_send)?;
        if let Some(e) = ResponseError::try_from_code(answer.error_code) {
            return Err(refused(e, None, "a producer id"));
        }
        let new = Session { id: answer.producer_id.0, epoch: answer.producer_epoch };
        *session = Some(new);
        Ok(new)
    }

    /// Drops producer id `stale` (if it is still the one in use): the next record asks for a
    /// new one, and every partition's sequence starts again from zero under it.
    async fn renew(&self, stale: Option<Session>) {
        let mut session = self.session.lock().await;
        if *session == stale {
            *session = None;
        }
    }

    /// The topic's partitions, from metadata at most [`METADATA_FRESH`] old.
    async fn topic(&self, name: &str) -> Result<Arc<Topic>, SendError> {
        if let Some(topic) = self.state().topics.get(name).filter(|t| t.read.elapsed() < METADATA_FRESH) {
            return Ok(topic.clone());
        }
        let wire = self.any_wire().await?;
        let request = MetadataRequest::default()
            .with_topics(Some(vec![
                MetadataRequestTopic::default().with_name(Some(TopicName(StrBytes::from_string(name.to_owned())))),
            ]))
            .with_allow_auto_topic_creation(false);
        let answer = wire.call(&request, METADATA_V).await.map_err(WireError::into_send)?;
        let found = answer.topics.iter().find(|t| t.name.as_ref().is_some_and(|n| n.0.as_str() == name));
        let Some(found) = found else {
            return Err(refused(ResponseError::UnknownTopicOrPartition, None, &format!("topic {name}")));
        };
        if let Some(e) = ResponseError::try_from_code(found.error_code) {
            return Err(refused(e, None, &format!("topic {name}")));
        }
        let mut leaders = vec![-1; found.partitions.len()];
        for partition in &found.partitions {
            if let Some(slot) = usize::try_from(partition.partition_index).ok().and_then(|i| leaders.get_mut(i)) {
                *slot = partition.leader_id.0;
            }
        }
        if leaders.is_empty() {
            return Err(refused(
                ResponseError::UnknownTopicOrPartition,
                None,
                &format!("topic {name} (no partitions)"),
            ));
        }
        let topic = Arc::new(Topic { leaders, read: Instant::now() });
        let mut state = self.state();
        for broker in &answer.brokers {
            let port = u16::try_from(broker.port).unwrap_or(0);
            state.brokers.insert(broker.node_id.0, (broker.host.as_str().to_owned(), port));
        }
        state.topics.insert(name.to_owned(), topic.clone());
        Ok(topic)
    }

    fn forget_topic(&self, name: &str) {
        self.state().topics.remove(name);
    }

    fn forget_wire(&self, host: &str, port: u16, wire: &Arc<Wire>) {
        let mut state = self.state();
        let key = (host.to_owned(), port);
        if state.wires.get(&key).is_some_and(|w| Arc::ptr_eq(w, wire)) {
            state.wires.remove(&key);
        }
    }

    /// A connection to any broker: one already open, else the bootstrap servers in turn.
    async fn any_wire(&self) -> Result<Arc<Wire>, SendError> {
        let open = self.state().wires.values().find(|w| w.alive()).cloned();
        if let Some(wire) = open {
            return Ok(wire);
        }
        let mut last = SendError::Connect("no bootstrap server".to_owned());
        for (host, port) in &self.cluster.bootstrap {
            match self.wire(host, *port).await {
                Ok(wire) => return Ok(wire),
                Err(e @ SendError::Blocked(_)) => return Err(e),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The open connection to `host:port`, or a new one: its addresses held to the
    /// public-address rule, then TLS and SASL as the destination says.
    async fn wire(&self, host: &str, port: u16) -> Result<Arc<Wire>, SendError> {
        let key = (host.to_owned(), port);
        if let Some(wire) = self.state().wires.get(&key).filter(|w| w.alive()) {
            return Ok(wire.clone());
        }
        let addrs = self.cluster.rule.vet_host(host, port).await.map_err(SendError::Blocked)?;
        let wire = Wire::connect(host, port, &addrs, self.cluster.tls.as_ref()).await?;
        if let Some(login) = &self.cluster.login {
            sign_in(&wire, login).await?;
        }
        let wire = Arc::new(wire);
        let mut state = self.state();
        let kept = state.wires.entry(key).or_insert_with(|| wire.clone());
        if !kept.alive() {
            *kept = wire;
        }
        Ok(kept.clone())
    }
}
