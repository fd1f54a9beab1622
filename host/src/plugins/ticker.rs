//! The epoch ticker: a call's wall-clock deadline is a number of epoch ticks, and one
//! thread advances the engine's epoch every [`EPOCH_TICK`] — only while a call runs. With
//! none running it sleeps (parked), so a process whose tenants use no plugin pays nothing
//! for the runtime (it used to wake 1,000 times a second: ~2% of a core).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::Duration;

use wasmtime::Engine;

/// How often the wall-clock deadline is checked.
pub(super) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// The ticker thread's controls.
#[derive(Debug)]
pub(super) struct Ticker {
    /// Calls running now.
    running: AtomicUsize,
    /// Ticks so far.
    ticks: AtomicU64,
    stop: AtomicBool,
    thread: Thread,
}

/// A call running: the epoch advances until it is dropped.
#[derive(Debug)]
pub(super) struct Running<'a>(&'a Ticker);

impl Ticker {
    /// Starts the thread (parked until a call runs).
    pub(super) fn start(engine: Engine) -> std::io::Result<Arc<Ticker>> {
        let (tx, rx) = std::sync::mpsc::channel::<Arc<Ticker>>();
        let handle = std::thread::Builder::new().name("weir-plugin-epoch".into()).spawn(move || {
            let Ok(ticker) = rx.recv() else { return };
            while !ticker.stop.load(Ordering::Acquire) {
                if ticker.running.load(Ordering::Acquire) == 0 {
                    // Woken by the next call (or the stop); a wake that came first is kept.
                    std::thread::park();
                    continue;
                }
                std::thread::sleep(EPOCH_TICK);
                engine.increment_epoch();
                ticker.ticks.fetch_add(1, Ordering::Relaxed);
            }
        })?;
        let ticker = Arc::new(Ticker {
            running: AtomicUsize::new(0),
            ticks: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            thread: handle.thread().clone(),
        });
        // The thread ends at once if this fails (the receiver sees the sender gone).
        let _ = tx.send(ticker.clone());
        Ok(ticker)
    }

    /// Marks a call as running (its deadline starts counting) until the guard is dropped.
    pub(super) fn running(&self) -> Running<'_> {
        if self.running.fetch_add(1, Ordering::AcqRel) == 0 {
            self.thread.unpark();
        }
        Running(self)
    }

    /// Ends the thread.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.thread.unpark();
    }

    #[cfg(test)]
    fn ticks(&self) -> u64 {
        self.ticks.load(Ordering::Relaxed)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_epoch_advances_only_while_a_call_runs() {
        let ticker = Ticker::start(Engine::default()).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(ticker.ticks(), 0, "no call ran");
        let during = {
            let _first = ticker.running();
            let _second = ticker.running();
            std::thread::sleep(Duration::from_millis(30));
            ticker.ticks()
        };
        assert!(during >= 5, "{during} ticks in 30 ms of a call");
        std::thread::sleep(Duration::from_millis(10));
        let after = ticker.ticks();
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(ticker.ticks(), after, "the calls ended");
        let _again = ticker.running();
        std::thread::sleep(Duration::from_millis(20));
        assert!(ticker.ticks() > after, "a new call wakes it");
        ticker.stop();
    }
}
