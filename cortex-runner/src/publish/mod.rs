//! Each frame's results to a message broker (feature `mqtt`): one MQTT
//! message per frame, QoS 1, on `PREFIX/<stream>/results`, its payload the
//! frame's JSON line exactly as `run --json` prints it.
//!
//! The pipeline never waits for the broker: [`Publisher::publish`] puts
//! the message in a bounded queue and returns; a thread of the publisher's
//! own hands messages to the MQTT client ([`rumqttc`]) a window at a time,
//! keeps a copy of each until the broker acknowledges it, and reconnects
//! with back-off when the connection drops. While the broker is away the
//! queue fills; once full, the oldest message is dropped for each new one
//! and counted. Messages the broker had not acknowledged when the
//! connection dropped are sent again on the next connection (QoS 1: a
//! subscriber may see such a message twice, never a frame's message
//! missing without it being counted). At the end, [`Publisher::close`]
//! waits (a bounded time) for the queue to drain, then reports
//! [`PublishStats`], whose counts add up: every message given is
//! delivered, dropped, refused or left unsent.
//!
//! ```no_run
//! use cortex_runner::publish::{Publisher, PublishOptions, Target};
//! let target = Target::parse("mqtt://127.0.0.1:1883/site-a")?;
//! let publisher = Publisher::start(target, PublishOptions::default())?;
//! publisher.publish(0, br#"{"frame":0}"#.to_vec());
//! let stats = publisher.close();
//! assert_eq!(stats.given, stats.delivered + stats.dropped + stats.refused + stats.unsent);
//! # Ok::<(), cortex_runner::publish::PublishError>(())
//! ```

mod mqtt;
mod target;

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

pub use target::{Target, CA_VAR, CLIENT_ID_VAR, PASSWORD_VAR, USERNAME_VAR};

use mqtt::{Message, Shared, State};

/// The largest message the publisher sends (1 MiB); a larger one is
/// refused and counted (brokers' own limits are usually higher; mosquitto's
/// default is 256 MiB).
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;

/// Why a publisher could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PublishError {
    /// A broker URL that does not parse.
    #[error("--publish {url}: {why}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// `mqtts://` in a build without TLS, or without its certificate
    /// authority.
    #[error("--publish: {0}")]
    Tls(String),
    /// An option out of range.
    #[error("--publish: {0}")]
    Options(String),
    /// The publisher's thread could not start.
    #[error("--publish: starting its thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// How a publisher queues, and how long it waits at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishOptions {
    /// Messages waiting for the broker, at most (then the oldest is
    /// dropped); 1 to 1 000 000.
    pub queue: usize,
    /// How long [`Publisher::close`] waits for the queue to drain and the
    /// broker to acknowledge what it was sent.
    pub close_timeout: Duration,
    /// The first wait before reconnecting; it doubles after each failed
    /// attempt up to `max_backoff`.
    pub backoff: Duration,
    /// The longest wait between reconnection attempts.
    pub max_backoff: Duration,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions {
            queue: 1000,
            close_timeout: Duration::from_secs(10),
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

/// What a publisher did: counts of messages, connections and the last
/// connection error. After [`Publisher::close`], `given = delivered +
/// dropped + refused + unsent`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublishStats {
    /// Messages given to [`Publisher::publish`].
    pub given: u64,
    /// Messages the broker acknowledged (QoS 1 PUBACK).
    pub delivered: u64,
    /// Messages dropped because the queue was full (the oldest go first).
    pub dropped: u64,
    /// Messages larger than [`MAX_MESSAGE_BYTES`], never queued.
    pub refused: u64,
    /// Messages still queued or unacknowledged when `close` stopped
    /// waiting.
    pub unsent: u64,
    /// Messages sent again after a connection dropped before the broker
    /// acknowledged them (a subscriber may have seen them twice).
    pub resent: u64,
    /// Connections made to the broker.
    pub connections: u64,
    /// Connections lost or attempts failed.
    pub connection_errors: u64,
    /// The last connection error, if any.
    pub last_error: Option<String>,
}

impl PublishStats {
    /// One line for a run's summary.
    pub fn line(&self, target: &Target) -> String {
        let scheme = if target.tls { "mqtts" } else { "mqtt" };
        let mut s = format!(
            "published to {scheme}://{}:{}/{}: {} of {} messages delivered, {} dropped (queue full), {} unsent at the end",
            target.host, target.port, target.prefix, self.delivered, self.given, self.dropped, self.unsent
        );
        if self.refused > 0 {
            s.push_str(&format!(", {} refused (over 1 MiB)", self.refused));
        }
        s.push_str(&format!(
            "; {} connections, {} connection errors",
            self.connections, self.connection_errors
        ));
        if self.resent > 0 {
            s.push_str(&format!(", {} resent after a reconnect", self.resent));
        }
        if let Some(e) = &self.last_error {
            s.push_str(&format!(" (last: {e})"));
        }
        s
    }
}

/// Publishes messages to an MQTT broker from a thread of its own; see the
/// module documentation.
pub struct Publisher {
    target: Arc<Target>,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Publisher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publisher")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl Publisher {
    /// Starts publishing to `target`. Nothing waits for the broker: one
    /// that is unreachable now is an outage like one later (messages queue,
    /// then drop, counted; the connection is retried with back-off).
    ///
    /// # Errors
    /// [`PublishError::Options`] for a queue of 0 or over 1 000 000
    /// messages; [`PublishError::Tls`] for `mqtts://` without TLS in the
    /// build (feature `mqtt-tls`) or without [`CA_VAR`];
    /// [`PublishError::Thread`] when the thread cannot start.
    pub fn start(target: Target, options: PublishOptions) -> Result<Publisher, PublishError> {
        if options.queue == 0 || options.queue > 1_000_000 {
            return Err(PublishError::Options(format!(
                "a queue of {} messages: it must hold 1 to 1000000",
                options.queue
            )));
        }
        let connection = mqtt::connect_options(&target)?;
        let target = Arc::new(target);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            options,
        });
        let thread = {
            let (target, shared) = (Arc::clone(&target), Arc::clone(&shared));
            std::thread::Builder::new()
                .name("cortex-mqtt".into())
                .spawn(move || mqtt::run(connection, &target, &shared))
                .map_err(PublishError::Thread)?
        };
        Ok(Publisher {
            target,
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The broker and topics.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Queues `payload` for stream `stream`'s topic and returns at once:
    /// when the queue is full the oldest waiting message is dropped
    /// (counted in [`PublishStats::dropped`]).
    pub fn publish(&self, stream: u32, payload: Vec<u8>) {
        let mut state = self.shared.lock();
        state.stats.given += 1;
        if state.closed {
            state.stats.unsent += 1;
            return;
        }
        if payload.len() > MAX_MESSAGE_BYTES {
            state.stats.refused += 1;
            return;
        }
        if state.queue.len() >= self.shared.options.queue {
            state.queue.pop_front();
            state.stats.dropped += 1;
        }
        state.queue.push_back(Message { stream, payload });
        drop(state);
        self.shared.changed.notify_all();
    }

    /// The counts so far.
    pub fn stats(&self) -> PublishStats {
        self.shared.lock().stats.clone()
    }

    /// Waits up to [`PublishOptions::close_timeout`] for every queued
    /// message to be delivered, disconnects, and returns the counts (what
    /// was still waiting is [`PublishStats::unsent`]). Messages published
    /// after this are counted as given and unsent.
    pub fn close(&self) -> PublishStats {
        self.finish();
        self.stats()
    }

    fn finish(&self) {
        let thread = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(thread) = thread else {
            return;
        };
        self.shared.lock().closing = true;
        self.shared.changed.notify_all();
        // The thread ends within the close timeout (plus one connection
        // attempt); a panic in it leaves the counts as they were.
        let _ = thread.join();
        let mut state = self.shared.lock();
        state.closed = true;
        // What the thread left (it ended early: a panic) is unsent.
        let left = state.queue.len() as u64;
        state.stats.unsent += left;
        state.queue.clear();
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.finish();
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A broker nobody runs: the pipeline's side never waits, the queue
    /// keeps the newest, and the counts add up at the end.
    #[test]
    fn an_unreachable_broker_costs_counted_messages_never_a_wait() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let target = Target::parse(&format!("mqtt://127.0.0.1:{port}/t")).unwrap();
        let options = PublishOptions {
            queue: 10,
            close_timeout: Duration::from_millis(300),
            ..PublishOptions::default()
        };
        let p = Publisher::start(target, options).unwrap();
        for i in 0..50u32 {
            p.publish(i % 2, vec![b'x'; 100]);
        }
        p.publish(0, vec![0; MAX_MESSAGE_BYTES + 1]);
        let s = p.close();
        assert_eq!(
            (s.given, s.delivered, s.dropped, s.refused, s.unsent),
            (51, 0, 40, 1, 10),
            "{s:?}"
        );
        assert_eq!(s.connections, 0);
        assert!(s.connection_errors >= 1 && s.last_error.is_some(), "{s:?}");
        // After close, a message is unsent at once.
        p.publish(0, b"late".to_vec());
        assert_eq!(p.stats().unsent, 11);
        assert!(s
            .line(p.target())
            .starts_with("published to mqtt://127.0.0.1:"));
    }

    #[test]
    fn a_queue_out_of_range_is_refused() {
        let target = Target::parse("mqtt://127.0.0.1").unwrap();
        for queue in [0, 1_000_001] {
            let options = PublishOptions {
                queue,
                ..PublishOptions::default()
            };
            assert!(matches!(
                Publisher::start(target.clone(), options),
                Err(PublishError::Options(_))
            ));
        }
    }
}
