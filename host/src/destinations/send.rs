//! Sending an attempt's message to where its webhook points ([`Destination`]): every kind's
//! sender in one process ([`Destinations`]), one timeout and one slow mark for all of them,
//! and what came back ([`Sent`]). Attempts, the retry policy, recording, metrics and tracing
//! read [`Answer`] and [`SendError`] and need nothing of a kind.

use std::time::{Duration, Instant};

use super::http::{Http, Presented};
use super::kind::{Sealed, SenderParts};
use super::message::{Answer, Message, SendError};
use super::{Senders, Spec};

/// Where one attempt goes.
#[derive(Debug, Clone)]
pub(crate) enum Destination<'a> {
    /// An HTTP endpoint: `POST` to `url`, presenting the webhook's client certificate if it
    /// has one.
    Http { url: &'a str, presented: Option<Presented<'a>> },
    /// Any other kind, its credentials sealed for the webhook.
    Other { spec: Spec, sealed: Option<Sealed<'a>> },
    /// A destination whose stored form cannot be read (every attempt fails, saying so).
    Unreadable { address: &'a str, why: String },
}

impl Destination<'_> {
    /// Its address as spans and logs show it.
    pub(crate) fn address(&self) -> &str {
        match self {
            Destination::Http { url, .. } => url,
            Destination::Other { spec, .. } => spec.address(),
            Destination::Unreadable { address, .. } => address,
        }
    }

    /// Its kind (`http`, `nats`, `amqp`, `sqs`…), as metrics label it.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Destination::Http { .. } | Destination::Unreadable { .. } => "http",
            Destination::Other { spec, .. } => spec.kind(),
        }
    }

    /// Another kind's `messaging.system` and `messaging.destination.name` (spans); `None`
    /// for HTTP.
    pub(crate) fn messaging(&self) -> Option<(&'static str, &str)> {
        let Destination::Other { spec, .. } = self else { return None };
        Some((spec.system(), spec.target()))
    }
}

/// The outcome of one attempt's send, with its duration.
#[derive(Debug)]
pub(crate) struct Sent {
    pub result: Result<Answer, SendError>,
    pub duration: Duration,
    /// The destination's kind (metrics).
    pub kind: &'static str,
}

impl Sent {
    /// What the attempt got, as a metrics label: the status class (`2xx`…`5xx`), `ack` for
    /// a broker's acknowledgement, or why there was no answer (`timeout`, `connect`, `tls`,
    /// `blocked`, `request`, `proxy`, `refused`).
    pub(crate) fn class(&self) -> &'static str {
        match &self.result {
            Ok(answer) if answer.is_ack() => "ack",
            Ok(answer) => match answer.status() {
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                500..=599 => "5xx",
                _ => "1xx",
            },
            Err(SendError::Timeout(_)) => "timeout",
            Err(SendError::Connect(_)) => "connect",
            Err(SendError::Tls(_)) => "tls",
            Err(SendError::Blocked(_)) => "blocked",
            Err(SendError::Request(_)) => "request",
            Err(SendError::Proxy(_)) => "proxy",
            Err(SendError::Refused(_)) => "refused",
        }
    }
}

/// The senders of every kind, shared by a process's attempts, and the delivery timeout.
#[derive(Debug)]
pub(crate) struct Destinations {
    http: Http,
    others: Senders,
    timeout: Duration,
}

impl Destinations {
    /// Every kind's sender, made of `parts`, with the delivery timeout.
    pub(crate) fn new(parts: &SenderParts, timeout: Duration) -> Destinations {
        Destinations { http: parts.http.clone(), others: Senders::new(parts), timeout }
    }

    /// Sends `message` to `to` within the delivery timeout; `slow` is called once when no
    /// answer came within `slow_after`. One timer serves both: it is set for the slow mark,
    /// then moved to the timeout (each timer an attempt registers can wake the runtime's
    /// driver).
    pub(crate) async fn send(
        &self,
        to: &Destination<'_>,
        message: Message<'_>,
        slow_after: Duration,
        slow: impl FnOnce(),
    ) -> Sent {
        let started = Instant::now();
        let exchange = async {
            match to {
                Destination::Http { url, presented } => {
                    self.http.send(url, *presented, message).await.map(Answer::from)
                }
                Destination::Other { spec, sealed } => self.others.send(spec, *sealed, message).await,
                Destination::Unreadable { why, .. } => {
                    Err(SendError::Request(format!("the webhook's destination cannot be read: {why}")))
                }
            }
        };
        let timeout = started + self.timeout;
        let mut slow = (slow_after < self.timeout).then_some(slow);
        let timer = tokio::time::sleep_until(if slow.is_some() { started + slow_after } else { timeout }.into());
        tokio::pin!(timer, exchange);
        let result = loop {
            tokio::select! {
                biased;
                result = &mut exchange => break result,
                () = &mut timer => match slow.take() {
                    Some(mark) => {
                        mark();
                        timer.as_mut().reset(timeout.into());
                    }
                    None => break Err(SendError::Timeout(self.timeout)),
                },
            }
        };
        Sent { result, duration: started.elapsed(), kind: to.kind() }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::Bytes;

    use super::*;
    use crate::destinations::message::KeySource;
    use crate::netguard::UrlRule;

    /// Destinations allowed to reach loopback, with the given delivery timeout.
    fn loopback_sender(timeout: Duration) -> Destinations {
        let tls = rustls::ClientConfig::builder()
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth();
        let rule = UrlRule::new(vec!["127.0.0.0/8".parse().unwrap()]);
        let secret: KeySource = Arc::new(|| Err("no key in this test".to_owned()));
        let http = Http::new(rule.clone(), tls.clone(), None, secret.clone(), 4);
        Destinations::new(&SenderParts { rule, secret, tls: Arc::new(tls), http }, timeout)
    }

    /// An attempt's send of `{}` to `url`, slow past `slow_after`.
    async fn post(sender: &Destinations, url: &str, slow_after: Duration, mark: impl FnOnce()) -> Sent {
        let to = Destination::Http { url, presented: None };
        let message = Message { headers: &[], body: Bytes::from_static(b"{}") };
        sender.send(&to, message, slow_after, mark).await
    }

    /// Answers every connection's first request with `answer` (or, when `None`, accepts
    /// and never answers); its address.
    async fn endpoint(answer: Option<&'static [u8]>) -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut socket, _)) = listener.accept().await {
                if let Some(answer) = answer {
                    let mut request = [0u8; 4096];
                    let _ = socket.read(&mut request).await;
                    let _ = socket.write_all(answer).await;
                }
                held.push(socket);
            }
        });
        addr
    }

    #[tokio::test]
    async fn an_unanswered_attempt_is_marked_slow_once_and_then_times_out() {
        let addr = endpoint(None).await;
        let sender = loopback_sender(Duration::from_millis(400));
        let marks = std::sync::atomic::AtomicUsize::new(0);
        let mark = || {
            marks.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        };
        let url = format!("http://{addr}/");
        let sent = post(&sender, &url, Duration::from_millis(100), mark).await;
        assert!(
            matches!(sent.result, Err(SendError::Timeout(t)) if t == Duration::from_millis(400)),
            "{:?}",
            sent.result
        );
        assert_eq!(marks.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert!(sent.duration >= Duration::from_millis(400), "{:?}", sent.duration);
        assert!(sent.duration < Duration::from_secs(5), "{:?}", sent.duration);
    }

    #[tokio::test]
    async fn an_answer_in_time_is_never_marked_slow_nor_is_a_slow_mark_past_the_timeout() {
        let addr = endpoint(Some(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")).await;
        let sender = loopback_sender(Duration::from_secs(5));
        let url = format!("http://{addr}/");
        let marked = std::sync::atomic::AtomicBool::new(false);
        let mark = || marked.store(true, std::sync::atomic::Ordering::SeqCst);
        let sent = post(&sender, &url, Duration::from_secs(1), mark).await;
        assert_eq!(sent.result.as_ref().map(|r| r.status()).ok(), Some(204), "{:?}", sent.result);
        assert!(!marked.load(std::sync::atomic::Ordering::SeqCst));

        // A slow mark at or past the timeout is never made: the timeout comes first.
        let hanging = endpoint(None).await;
        let sender = loopback_sender(Duration::from_millis(200));
        let url = format!("http://{hanging}/");
        let sent = post(&sender, &url, Duration::from_millis(200), mark).await;
        assert!(matches!(sent.result, Err(SendError::Timeout(_))), "{:?}", sent.result);
        assert!(!marked.load(std::sync::atomic::Ordering::SeqCst));
    }
}
