//! Panics caught where a tenant's work runs: a future polled through [`Caught`] that panics
//! answers [`Panicked`] (its message and where it happened) instead of unwinding through
//! the task that polled it, so the caller can record the failure, give back what it held
//! and go on. The process's panic hook ([`install_hook`]) leaves such a panic to the caller
//! to log — once, with what it was doing — and prints every other panic as before.
//!
//! Ground floor: imports nothing of Weir.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::panic::{AssertUnwindSafe, PanicHookInfo};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

/// A panic that was caught: its message and its place in the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Panicked {
    pub message: String,
    pub location: String,
}

impl std::fmt::Display for Panicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at {})", self.message, self.location)
    }
}

thread_local! {
    /// How many [`Caught`] polls are under way on this thread (nested ones count).
    static WATCHING: Cell<u32> = const { Cell::new(0) };
    /// What the hook saw of the last panic under a [`Caught`] poll on this thread.
    static SEEN: RefCell<Option<Panicked>> = const { RefCell::new(None) };
}

/// Installs the hook (once per process): a panic under a [`Caught`] poll is kept for its
/// caller; any other goes to the hook that was there before.
pub(crate) fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if WATCHING.with(Cell::get) > 0 {
                SEEN.with(|seen| *seen.borrow_mut() = Some(of_hook(info)));
            } else {
                before(info);
            }
        }));
    });
}

fn of_hook(info: &PanicHookInfo<'_>) -> Panicked {
    let location =
        info.location().map_or_else(|| "an unknown place".to_owned(), |l| format!("{}:{}", l.file(), l.line()));
    Panicked { message: message_of(info.payload()), location }
}

fn message_of(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// A future whose panics are caught: it answers `Err(Panicked)` once its inner future
/// panicked (and is not polled again).
#[derive(Debug)]
pub(crate) struct Caught<F> {
    inner: Option<F>,
}

/// Polls `future` with its panics caught (`future` is `Unpin`: a `Pin<&mut _>` or a box).
pub(crate) fn caught<F: Future + Unpin>(future: F) -> Caught<F> {
    Caught { inner: Some(future) }
}

impl<F: Future + Unpin> Future for Caught<F> {
    type Output = Result<F::Output, Panicked>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(Err(Panicked { message: "polled after it panicked".into(), location: String::new() }));
        };
        WATCHING.with(|w| w.set(w.get() + 1));
        let polled = std::panic::catch_unwind(AssertUnwindSafe(|| Pin::new(inner).poll(cx)));
        WATCHING.with(|w| w.set(w.get() - 1));
        match polled {
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => {
                self.inner = None;
                let seen = SEEN.with(|seen| seen.borrow_mut().take());
                let location = String::from("an unknown place (no panic hook)");
                Poll::Ready(Err(seen.unwrap_or_else(|| Panicked { message: message_of(&*payload), location })))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_in_a_caught_future_is_an_answer_with_its_message_and_place() {
        install_hook();
        let mut future = std::pin::pin!(async {
            tokio::task::yield_now().await;
            let text = String::from("ShortString exceeds maximum length");
            if !text.is_empty() {
                panic!("{text}");
            }
            1
        });
        let panicked = caught(future.as_mut()).await.unwrap_err();
        assert_eq!(panicked.message, "ShortString exceeds maximum length");
        assert!(panicked.location.starts_with("host/src/panics.rs:"), "{}", panicked.location);
        assert_eq!(caught(Box::pin(async { 7 })).await, Ok(7), "no panic: the output");
    }

    #[tokio::test]
    async fn a_static_message_is_read_too() {
        install_hook();
        let panicked = caught(Box::pin(async {
            if std::hint::black_box(true) {
                panic!("fixed words");
            }
        }))
        .await
        .unwrap_err();
        assert_eq!(panicked.message, "fixed words");
    }
}
