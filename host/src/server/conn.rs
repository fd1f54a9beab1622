//! One connection's guard: the limits of contract §2 that HTTP/1's own header timeout does
//! not cover. The connection's bytes go through [`Watched`], which notes the last time any
//! moved, and its requests through [`Activity::begin`]; [`watchdog`] completes when the
//! connection must close:
//! - no request has started within [`FIRST_REQUEST`] of the connection opening (a client
//!   trickling a TLS handshake, an HTTP/2 preface or a request line one byte at a time);
//! - no request is in progress and no byte has moved for [`IDLE`] (an idle keep-alive
//!   connection, HTTP/2 included).
//!
//! HTTP/1 requests after the first are held to the same 10 s by hyper's header read
//! timeout, which starts when the previous response is done.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// Request headers must arrive within this time of the connection opening, or of the
/// previous request (contract §2).
pub(super) const FIRST_REQUEST: Duration = Duration::from_secs(10);
/// An idle keep-alive connection closes after this long (contract §2).
pub(super) const IDLE: Duration = Duration::from_secs(60);

/// What a connection has been doing.
#[derive(Debug)]
pub(super) struct Activity {
    opened: Instant,
    /// Milliseconds after `opened` that a byte last moved.
    last_io_ms: AtomicU64,
    in_flight: AtomicUsize,
    /// Requests started so far.
    started: AtomicUsize,
}

impl Activity {
    pub(super) fn new() -> Arc<Activity> {
        Arc::new(Activity {
            opened: Instant::now(),
            last_io_ms: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
        })
    }

    fn touch(&self) {
        self.last_io_ms.store(self.opened.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// A request started; it counts as in progress until the guard is dropped.
    pub(super) fn begin(self: &Arc<Self>) -> InFlight {
        self.started.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// When the connection must close if nothing changes before then; `None` while a
    /// request is in progress.
    fn deadline(&self) -> Option<Instant> {
        if self.started.load(Ordering::Relaxed) == 0 {
            return Some(self.opened + FIRST_REQUEST);
        }
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        Some(self.opened + Duration::from_millis(self.last_io_ms.load(Ordering::Relaxed)) + IDLE)
    }
}

/// A request in progress (see [`Activity::begin`]).
#[derive(Debug)]
pub(super) struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Completes when the connection has broken one of the limits above.
pub(super) async fn watchdog(activity: Arc<Activity>) {
    loop {
        let wake = match activity.deadline() {
            Some(deadline) if deadline <= Instant::now() => return,
            Some(deadline) => deadline,
            // A request is in progress: its own timeout bounds it; look again later.
            None => Instant::now() + Duration::from_secs(1),
        };
        tokio::time::sleep_until(wake).await;
    }
}

/// A stream that notes in its [`Activity`] when bytes move.
#[derive(Debug)]
pub(super) struct Watched<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> Watched<S> {
    pub(super) fn new(inner: S, activity: Arc<Activity>) -> Watched<S> {
        Watched { inner, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_connection_without_a_request_closes_after_the_first_request_limit() {
        let activity = Activity::new();
        let started = Instant::now();
        watchdog(activity).await;
        assert_eq!(started.elapsed(), FIRST_REQUEST);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_progress_keeps_the_connection_then_idleness_closes_it() {
        let activity = Activity::new();
        let request = activity.begin();
        let dog = tokio::spawn(watchdog(activity.clone()));
        tokio::time::sleep(Duration::from_secs(90)).await;
        assert!(!dog.is_finished(), "a long request is not idleness");
        let ended = Instant::now();
        drop(request);
        dog.await.unwrap();
        let idle = ended.elapsed();
        assert!(idle >= IDLE && idle <= IDLE + Duration::from_secs(1), "{idle:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn bytes_moving_postpone_the_idle_close() {
        let activity = Activity::new();
        drop(activity.begin());
        let dog = tokio::spawn(watchdog(activity.clone()));
        tokio::time::sleep(Duration::from_secs(50)).await;
        activity.touch();
        tokio::time::sleep(Duration::from_secs(50)).await;
        assert!(!dog.is_finished(), "bytes moved 50 s ago");
        tokio::time::sleep(Duration::from_secs(11)).await;
        assert!(dog.is_finished());
    }
}
