//! Group commit: requests that arrive while one round trip to Redis is in flight go
//! together in the next one. Under load this turns many small script calls into a few
//! large ones (Redis pays its per-call cost once per batch); a lone request goes at once,
//! with no timer.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tokio::sync::{mpsc, oneshot};

use crate::store::core::keys::Partition;
use crate::store::error::Result;
use crate::store::error::StoreError;

type Waiting<Req, Resp> = (Req, oneshot::Sender<Result<Resp>>);

/// Batches of lookups in flight at once. With one, a publish waited for the lookup batch
/// before its own as well as for its own, twice (token, then subscribers); with two, one
/// endpoint's load delivered more per second at less CPU per delivery (Weir and Redis) in
/// most alternated rounds, and publishing under fan-out had a lower p99
/// (docs/performance-history.md, "Issue 42, third pass"). The publishes themselves and the
/// delivery stages stay at one: two in flight there measured no better.
const LOOKUPS_IN_FLIGHT: usize = 2;

/// Hands requests to one task that runs them in batches of at most `max`.
#[derive(Debug)]
pub struct Batcher<Req, Resp> {
    tx: mpsc::UnboundedSender<Waiting<Req, Resp>>,
}

impl<Req: Send + 'static, Resp: Send + 'static> Batcher<Req, Resp> {
    /// One batcher per partition, each running `run(concern, partition, batch)`. The concern
    /// is shared, not copied: a batch costs one reference count whatever it holds.
    pub fn per_partition<C, F, Fut>(
        partitions: impl Iterator<Item = Partition>,
        concern: C,
        max: usize,
        run: F,
    ) -> Vec<Batcher<Req, Resp>>
    where
        C: Send + Sync + 'static,
        F: Fn(std::sync::Arc<C>, Partition, Vec<Req>) -> Fut + Clone + Send + 'static,
        Fut: Future<Output = Result<Vec<Resp>>> + Send,
    {
        let concern = std::sync::Arc::new(concern);
        partitions
            .map(|p| {
                let (concern, run) = (concern.clone(), run.clone());
                Batcher::spawn(max, move |batch: Vec<Req>| run(concern.clone(), p, batch))
            })
            .collect()
    }

    /// Starts the task. `run` gets the requests of a batch in arrival order and returns
    /// one response per request, in the same order; if it fails, every request of the
    /// batch gets its error. The task ends when the batcher is dropped.
    pub fn spawn<F, Fut>(max: usize, run: F) -> Batcher<Req, Resp>
    where
        F: Fn(Vec<Req>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Vec<Resp>>> + Send,
    {
        Batcher::spawn_deep(max, 1, run)
    }

    /// [`Batcher::spawn`] with up to `depth` batches in flight at once (a batch is taken
    /// only while fewer are): each still gets the requests that arrived before it went.
    pub fn spawn_deep<F, Fut>(max: usize, depth: usize, run: F) -> Batcher<Req, Resp>
    where
        F: Fn(Vec<Req>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Vec<Resp>>> + Send,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<Waiting<Req, Resp>>();
        tokio::spawn(async move {
            let mut waiting = Vec::with_capacity(max);
            let mut in_flight = FuturesUnordered::new();
            loop {
                tokio::select! {
                    biased;
                    Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
                    n = rx.recv_many(&mut waiting, max), if in_flight.len() < depth.max(1) => {
                        if n == 0 {
                            break;
                        }
                        let (requests, replies): (Vec<Req>, Vec<_>) = waiting.drain(..).unzip();
                        let running = run(requests);
                        in_flight.push(async move { answer(replies, running.await) });
                    }
                }
            }
            while in_flight.next().await.is_some() {}
        });
        Batcher { tx }
    }

    /// [`Batcher::spawn`] for lookups: identical requests of a batch (one busy publisher's
    /// token, one organisation's subscribers of an action) are run once and each gets that
    /// response. It is as fresh as each one's own would be: the batch runs after all of its
    /// requests arrived. Lookups only read, so [`LOOKUPS_IN_FLIGHT`] batches may be in flight
    /// at once.
    pub fn spawn_distinct<F, Fut>(max: usize, run: F) -> Batcher<Req, Resp>
    where
        Req: Eq + Hash + Clone,
        Resp: Clone,
        F: Fn(Vec<Req>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Vec<Resp>>> + Send,
    {
        Batcher::spawn_deep(max, LOOKUPS_IN_FLIGHT, move |requests: Vec<Req>| {
            let (unique, places) = distinct(requests);
            let wanted = unique.len();
            let responses = run(unique);
            async move {
                let responses = responses.await?;
                if responses.len() != wanted {
                    return Err(reply_count_mismatch(responses.len(), wanted));
                }
                Ok(places.into_iter().map(|i| responses[i].clone()).collect())
            }
        })
    }

    /// Runs `request` in the next batch and returns its response.
    pub async fn call(&self, request: Req) -> Result<Resp> {
        let (reply, response) = oneshot::channel();
        let stopped = || StoreError::Stopped("batch task");
        self.tx.send((request, reply)).map_err(|_| stopped())?;
        response.await.map_err(|_| stopped())?
    }
}

/// Gives each request of a batch its response, or the batch's error.
fn answer<Resp>(replies: Vec<oneshot::Sender<Result<Resp>>>, outcome: Result<Vec<Resp>>) {
    match outcome {
        Ok(responses) if responses.len() == replies.len() => {
            for (reply, response) in replies.into_iter().zip(responses) {
                let _ = reply.send(Ok(response));
            }
        }
        Ok(responses) => {
            let error = reply_count_mismatch(responses.len(), replies.len());
            for reply in replies {
                let _ = reply.send(Err(error.clone()));
            }
        }
        Err(error) => {
            for reply in replies {
                let _ = reply.send(Err(error.clone()));
            }
        }
    }
}

/// A batch's run answered `got` responses for `wanted` requests.
fn reply_count_mismatch(got: usize, wanted: usize) -> StoreError {
    StoreError::Reply { what: "a batch", reason: format!("{got} replies for {wanted} requests") }
}

/// The distinct requests, in first-seen order, and for each request the index of its
/// distinct one.
fn distinct<T: Eq + Hash + Clone>(requests: Vec<T>) -> (Vec<T>, Vec<usize>) {
    let mut first: HashMap<T, usize> = HashMap::with_capacity(requests.len());
    let mut unique = Vec::new();
    let places = requests
        .into_iter()
        .map(|r| {
            let next = unique.len();
            *first.entry(r).or_insert_with_key(|r| {
                unique.push(r.clone());
                next
            })
        })
        .collect();
    (unique, places)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn requests_arriving_together_share_a_batch_and_keep_their_order() {
        let batches = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = batches.clone();
        let batcher = Arc::new(Batcher::spawn(4, move |requests: Vec<u32>| {
            seen.lock().unwrap().push(requests.len());
            async move { Ok(requests.into_iter().map(|r| r * 10).collect()) }
        }));
        let calls: Vec<_> = (0..10)
            .map(|i| {
                tokio::spawn({
                    let b = batcher.clone();
                    async move { b.call(i).await }
                })
            })
            .collect();
        for (i, call) in calls.into_iter().enumerate() {
            assert_eq!(call.await.unwrap().unwrap(), i as u32 * 10);
        }
        let sizes = batches.lock().unwrap().clone();
        assert_eq!(sizes.iter().sum::<usize>(), 10);
        assert!(sizes.iter().all(|&n| n <= 4), "{sizes:?}");
        assert!(sizes.len() < 10, "nothing was batched: {sizes:?}");
    }

    #[tokio::test]
    async fn a_failed_batch_fails_each_of_its_requests_and_the_next_batch_runs() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let batcher = Batcher::spawn(8, move |requests: Vec<u32>| {
            let run = counter.fetch_add(1, Ordering::SeqCst);
            async move {
                if run == 0 {
                    Err(StoreError::Corrupt { key: "k".into(), reason: "boom".into() })
                } else {
                    Ok(requests)
                }
            }
        });
        assert!(matches!(batcher.call(1).await, Err(StoreError::Corrupt { .. })));
        assert_eq!(batcher.call(2).await.unwrap(), 2);
    }

    /// A batcher of `depth` whose first batch waits until `release` is sent; the calls
    /// `1` (into the held batch) and then `2` are made, and this says whether `2` was
    /// answered within `wait` while `1` was still held.
    async fn second_answered_while_first_held(depth: usize, wait: Duration) -> bool {
        let (release, held) = oneshot::channel::<()>();
        let (started, first_started) = oneshot::channel::<()>();
        let hold = Arc::new(tokio::sync::Mutex::new(Some((started, held))));
        let batcher = Arc::new(Batcher::spawn_deep(8, depth, move |requests: Vec<u32>| {
            let hold = hold.clone();
            async move {
                if requests.contains(&1)
                    && let Some((started, held)) = hold.lock().await.take()
                {
                    let _ = started.send(());
                    let _ = held.await;
                }
                Ok(requests)
            }
        }));
        let first = tokio::spawn({
            let b = batcher.clone();
            async move { b.call(1).await }
        });
        // The first batch is running (and held) before the second call is made.
        first_started.await.unwrap();
        let second = tokio::time::timeout(wait, batcher.call(2)).await;
        let answered = matches!(second, Ok(Ok(2)));
        release.send(()).unwrap();
        assert_eq!(first.await.unwrap().unwrap(), 1, "the held batch is answered once released");
        answered
    }

    #[tokio::test]
    async fn with_depth_two_a_batch_goes_while_another_is_in_flight_and_with_one_it_waits() {
        let (long, short) = (Duration::from_secs(10), Duration::from_millis(200));
        assert!(second_answered_while_first_held(2, long).await, "depth 2: the second batch went at once");
        assert!(!second_answered_while_first_held(1, short).await, "depth 1: the second batch waited for the first");
    }

    #[test]
    fn distinct_keeps_first_seen_order_and_where_each_request_went() {
        let (unique, places) = distinct(vec!["a", "b", "a", "c", "b", "a"]);
        assert_eq!(unique, ["a", "b", "c"]);
        assert_eq!(places, [0, 1, 0, 2, 1, 0]);
        let (none, no_places) = distinct::<u8>(Vec::new());
        assert!(none.is_empty() && no_places.is_empty());
    }

    #[tokio::test]
    async fn identical_requests_of_a_batch_run_once_and_each_gets_the_response() {
        let ran = Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = ran.clone();
        let batcher = Arc::new(Batcher::spawn_distinct(16, move |requests: Vec<String>| {
            seen.lock().unwrap().push(requests.clone());
            async move { Ok(requests.iter().map(|r| r.to_uppercase()).collect::<Vec<_>>()) }
        }));
        let names: [&'static str; 8] = ["a", "b", "a", "c", "b", "a", "a", "c"];
        let calls: Vec<_> = names
            .iter()
            .map(|&n| {
                let b = batcher.clone();
                tokio::spawn(async move { b.call(n.to_owned()).await })
            })
            .collect();
        for (name, call) in names.iter().zip(calls) {
            assert_eq!(call.await.unwrap().unwrap(), name.to_uppercase());
        }
        let ran = ran.lock().unwrap().clone();
        for batch in &ran {
            let mut sorted = batch.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), batch.len(), "a batch ran a request twice: {batch:?}");
        }
        assert!(ran.iter().map(Vec::len).sum::<usize>() < names.len(), "nothing was shared: {ran:?}");
    }

    #[tokio::test]
    async fn a_distinct_batch_with_a_short_reply_is_an_error() {
        let batcher = Batcher::spawn_distinct(8, |_requests: Vec<u32>| async { Ok(Vec::<u32>::new()) });
        assert!(matches!(batcher.call(1).await, Err(StoreError::Reply { .. })));
    }

    #[tokio::test]
    async fn a_short_reply_is_an_error_not_a_mismatch() {
        let batcher = Batcher::spawn(8, |_requests: Vec<u32>| async { Ok(Vec::<u32>::new()) });
        assert!(matches!(batcher.call(1).await, Err(StoreError::Reply { .. })));
    }
}
