//! One connection to a Kafka broker: TCP to an address the public-address rule vetted, TLS
//! when the destination asks for it, then requests written in order and answers matched to
//! them by correlation id (Kafka answers a connection's requests in order, but several
//! attempts share the connection, each waiting for its own answer).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, InitProducerIdRequest, InitProducerIdResponse, MetadataRequest, MetadataResponse, ProduceRequest,
    ProduceResponse, RequestHeader, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::oneshot;

use crate::destinations::message::SendError;

/// How long a TCP connection and TLS handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest answer read: a producer's answers are small, and a broker that sends more
/// than this is not one to trust with memory.
const MAX_ANSWER: usize = 16 << 20;

/// A request Weir sends, and the answer it reads.
pub(super) trait Request: Encodable + HeaderVersion {
    const KEY: ApiKey;
    type Response: Decodable + HeaderVersion;
}

macro_rules! requests {
    ($($request:ty => $key:ident, $response:ty;)+) => {
        $( impl Request for $request {
            const KEY: ApiKey = ApiKey::$key;
            type Response = $response;
        } )+
    };
}

requests! {
    MetadataRequest => Metadata, MetadataResponse;
    InitProducerIdRequest => InitProducerId, InitProducerIdResponse;
    ProduceRequest => Produce, ProduceResponse;
    SaslHandshakeRequest => SaslHandshake, SaslHandshakeResponse;
    SaslAuthenticateRequest => SaslAuthenticate, SaslAuthenticateResponse;
}

/// What a connection is carried over (TCP, or TLS over TCP).
trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

/// Answers awaited, by correlation id.
type Awaited = Arc<Mutex<HashMap<i32, oneshot::Sender<Bytes>>>>;

/// A connection to one broker, shared by the attempts that produce through it.
pub(super) struct Wire {
    /// Where it goes, for messages (`host:port`).
    pub name: String,
    writer: tokio::sync::Mutex<WriteHalf<Box<dyn Io>>>,
    awaited: Awaited,
    next: AtomicI32,
    closed: Arc<AtomicBool>,
    reader: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Wire {
    /// Connects to the first of `addrs` (vetted for `host`) that answers, over TLS when `tls`
    /// is given.
    pub(super) async fn connect(
        host: &str,
        port: u16,
        addrs: &[SocketAddr],
        tls: Option<&Arc<rustls::ClientConfig>>,
    ) -> Result<Wire, SendError> {
        let name = format!("{host}:{port}");
        let mut last = SendError::Connect(format!("{name}: no address"));
        for addr in addrs {
            let tcp = match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
                Ok(Ok(tcp)) => tcp,
                Ok(Err(e)) => {
                    last = SendError::Connect(format!("{name}: {e}"));
                    continue;
                }
                Err(_) => {
                    last = SendError::Connect(format!("{name}: no answer in {CONNECT_TIMEOUT:?}"));
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            let io: Box<dyn Io> = match tls {
                None => Box::new(tcp),
                Some(tls) => Box::new(handshake(tls, host, tcp).await?),
            };
            return Ok(Wire::over(name, io));
        }
        Err(last)
    }

    fn over(name: String, io: Box<dyn Io>) -> Wire {
        let (read, write) = tokio::io::split(io);
        let awaited = Awaited::default();
        let closed = Arc::new(AtomicBool::new(false));
        let reader = tokio::spawn(read_answers(read, awaited.clone(), closed.clone()));
        Wire { name, writer: tokio::sync::Mutex::new(write), awaited, next: AtomicI32::new(1), closed, reader }
    }

    /// Whether the connection is still open.
    pub(super) fn alive(&self) -> bool {
        !self.closed.load(Ordering::Relaxed)
    }

    /// Sends `request` as `version` and waits for its answer. `Err(Gone)`: the connection
    /// closed before the answer came (whether the broker acted on it is unknown).
    pub(super) async fn call<R: Request>(&self, request: &R, version: i16) -> Result<R::Response, WireError> {
        let answer = {
            let mut writer = self.writer.lock().await;
            if !self.alive() {
                return Err(WireError::Gone(format!("{}: the connection closed", self.name)));
            }
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let frame = frame(request, version, id).map_err(|e| WireError::Encode(e.to_string()))?;
            let (tx, rx) = oneshot::channel();
            lock(&self.awaited).insert(id, tx);
            let forget = Forget { awaited: &self.awaited, id };
            if let Err(e) = writer.write_all(&frame).await.and(writer.flush().await) {
                self.closed.store(true, Ordering::Relaxed);
                return Err(WireError::Gone(format!("{}: {e}", self.name)));
            }
            drop(writer);
            let answer = rx.await;
            drop(forget);
            answer
        };
        let mut answer = answer.map_err(|_| WireError::Gone(format!("{}: the connection closed", self.name)))?;
        let header_version = R::Response::header_version(version);
        kafka_protocol::messages::ResponseHeader::decode(&mut answer, header_version)
            .and_then(|_| R::Response::decode(&mut answer, version))
            .map_err(|e| WireError::Decode(format!("{}: an answer Weir cannot read: {e}", self.name)))
    }
}

/// Why a call got no answer.
#[derive(Debug)]
pub(super) enum WireError {
    /// The connection closed (or failed) with the request possibly sent.
    Gone(String),
    /// The request could not be written (not sent at all).
    Encode(String),
    /// The answer could not be read (the broker did answer).
    Decode(String),
}

impl WireError {
    pub(super) fn into_send(self) -> SendError {
        match self {
            WireError::Gone(why) => SendError::Connect(why),
            WireError::Encode(why) => SendError::Request(why),
            WireError::Decode(why) => SendError::Refused(why),
        }
    }
}

/// Removes an awaited answer's entry when its caller stops waiting (an attempt's timeout).
struct Forget<'a> {
    awaited: &'a Awaited,
    id: i32,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        lock(self.awaited).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A request's frame: its length, its header, its body.
fn frame<R: Request>(request: &R, version: i16, id: i32) -> anyhow::Result<BytesMut> {
    let header = RequestHeader::default()
        .with_request_api_key(R::KEY as i16)
        .with_request_api_version(version)
        .with_correlation_id(id)
        .with_client_id(Some(StrBytes::from_static_str("weir")));
    let mut body = BytesMut::new();
    header.encode(&mut body, R::header_version(version))?;
    request.encode(&mut body, version)?;
    let mut frame = BytesMut::with_capacity(body.len() + 4);
    frame.put_u32(u32::try_from(body.len())?);
    frame.put(body);
    Ok(frame)
}

/// Reads answers until the connection ends, handing each to its caller; then marks the
/// connection closed (every caller still waiting learns it as its answer's sender drops).
async fn read_answers(mut read: ReadHalf<Box<dyn Io>>, awaited: Awaited, closed: Arc<AtomicBool>) {
    while let Ok(length) = read.read_u32().await {
        let length = length as usize;
        if !(4..=MAX_ANSWER).contains(&length) {
            break;
        }
        let mut answer = BytesMut::zeroed(length);
        if read.read_exact(&mut answer).await.is_err() {
            break;
        }
        let answer = answer.freeze();
        let id = (&answer[..4]).get_i32();
        if let Some(caller) = lock(&awaited).remove(&id) {
            let _ = caller.send(answer);
        }
    }
    closed.store(true, Ordering::Relaxed);
    lock(&awaited).clear();
}

/// TLS over `tcp`, the broker's certificate checked against `host`.
async fn handshake(
    tls: &Arc<rustls::ClientConfig>,
    host: &str,
    tcp: tokio::net::TcpStream,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, SendError> {
    let name = rustls::pki_types::ServerName::try_from(host.trim_start_matches('[').trim_end_matches(']').to_owned())
        .map_err(|_| SendError::Tls(format!("{host} is not a name TLS can check")))?;
    let connector = tokio_rustls::TlsConnector::from(tls.clone());
    match tokio::time::timeout(CONNECT_TIMEOUT, connector.connect(name, tcp)).await {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(e)) => Err(SendError::Tls(format!("{host}: {e}"))),
        Err(_) => Err(SendError::Tls(format!("{host}: no handshake in {CONNECT_TIMEOUT:?}"))),
    }
}
