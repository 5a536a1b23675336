//! The publisher's thread: hands queued messages to the MQTT client a
//! window at a time, keeps a copy of each until the broker acknowledges
//! it, and reconnects with back-off; all on one thread, so what the client
//! holds when a connection drops is exactly what this thread handed it.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use rumqttc::{
    Client, Connection, Event, MqttOptions, Outgoing, Packet, QoS, RecvTimeoutError, Transport,
};

use super::{PublishError, PublishOptions, PublishStats, Target, MAX_MESSAGE_BYTES};

/// Messages handed to the client and not yet acknowledged, at most: the
/// client's in-flight limit, so that it never holds a message back on its
/// own.
const WINDOW: u16 = 32;
/// How long one connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// While messages are in flight: the longest wait for the broker's next
/// packet before new messages are handed over.
const BUSY_POLL: Duration = Duration::from_millis(20);
/// With nothing to send: how often the connection is still served (pings).
const IDLE_WAKE: Duration = Duration::from_millis(100);
/// Keep-alive: how soon a silent broker (a dead link, not a refused
/// connection) is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(10);

/// One frame's message.
pub(super) struct Message {
    pub(super) stream: u32,
    pub(super) payload: Vec<u8>,
}

/// What the caller's side and the thread share.
#[derive(Default)]
pub(super) struct State {
    pub(super) queue: VecDeque<Message>,
    pub(super) stats: PublishStats,
    pub(super) closing: bool,
    /// The thread has ended: later messages are unsent at once.
    pub(super) closed: bool,
}

pub(super) struct Shared {
    pub(super) state: Mutex<State>,
    pub(super) changed: Condvar,
    pub(super) options: PublishOptions,
}

/// The client's options for `target`: credentials from the environment,
/// TLS with the certificate authority [`super::CA_VAR`] names.
pub(super) fn connect_options(target: &Target) -> Result<MqttOptions, PublishError> {
    let id = std::env::var(super::CLIENT_ID_VAR)
        .unwrap_or_else(|_| format!("cortex-{}", std::process::id()));
    let mut o = MqttOptions::new(id, target.host.clone(), target.port);
    o.set_keep_alive(KEEP_ALIVE)
        // A new session on each connection: what the broker had not
        // acknowledged is sent again by this thread, counted.
        .set_clean_session(true)
        .set_inflight(WINDOW)
        .set_request_channel_capacity(usize::from(WINDOW))
        .set_max_packet_size(MAX_MESSAGE_BYTES + 4096, MAX_MESSAGE_BYTES + 4096);
    if let Ok(user) = std::env::var(super::USERNAME_VAR) {
        o.set_credentials(user, std::env::var(super::PASSWORD_VAR).unwrap_or_default());
    }
    if target.tls {
        o.set_transport(tls_transport()?);
    }
    Ok(o)
}

#[cfg(feature = "mqtt-tls")]
fn tls_transport() -> Result<Transport, PublishError> {
    let path = std::env::var(super::CA_VAR).map_err(|_| {
        PublishError::Tls(format!(
            "mqtts:// checks the broker against the certificate authority in {} (a PEM file); it is not set",
            super::CA_VAR
        ))
    })?;
    let ca = cortex_core::untrusted::read_regular(std::path::Path::new(&path), 1 << 20)
        .map_err(|e| PublishError::Tls(format!("{}={path}: {e}", super::CA_VAR)))?;
    Ok(Transport::tls(ca, None, None))
}

#[cfg(not(feature = "mqtt-tls"))]
fn tls_transport() -> Result<Transport, PublishError> {
    Err(PublishError::Tls(
        "mqtts:// needs a build with `--features mqtt-tls`".into(),
    ))
}

/// The thread's own bookkeeping of what the client holds.
struct Flight {
    /// Handed to the client, not yet given a packet id (in the client's
    /// channel), in the order handed.
    handed: VecDeque<Message>,
    /// Sent with a packet id, awaiting the broker's PUBACK, in order sent.
    sent: VecDeque<(u16, Message)>,
}

impl Flight {
    fn len(&self) -> usize {
        self.handed.len() + self.sent.len()
    }
}

/// Runs until closed: see the module documentation.
pub(super) fn run(options: MqttOptions, target: &Target, shared: &Shared) {
    let (client, mut connection) = Client::new(options, usize::from(WINDOW));
    let opts = shared.options;
    let mut flight = Flight {
        handed: VecDeque::new(),
        sent: VecDeque::new(),
    };
    let mut connected = false;
    let mut backoff = opts.backoff;
    let mut deadline: Option<Instant> = None;
    loop {
        let mut state = shared.lock();
        if state.closing && deadline.is_none() {
            deadline = Some(Instant::now() + opts.close_timeout);
        }
        if state.closing && state.queue.is_empty() && flight.len() == 0 {
            drop(state);
            disconnect(&client, &mut connection, connected);
            return;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            state.stats.unsent += (state.queue.len() + flight.len()) as u64;
            state.queue.clear();
            return;
        }
        if connected {
            while flight.len() < usize::from(WINDOW) {
                let Some(m) = state.queue.pop_front() else {
                    break;
                };
                let topic = target.topic(m.stream);
                match client.try_publish(topic, QoS::AtLeastOnce, false, m.payload.clone()) {
                    Ok(()) => flight.handed.push_back(m),
                    Err(_) => {
                        state.queue.push_front(m);
                        break;
                    }
                }
            }
        }
        let idle = connected && state.queue.is_empty() && flight.len() == 0;
        let wait = if !connected {
            CONNECT_TIMEOUT
        } else if idle && !state.closing {
            // Nothing to send: sleep until a message comes (or the
            // keep-alive needs serving).
            let (s, woke) = shared
                .changed
                .wait_timeout_while(state, IDLE_WAKE, |s| s.queue.is_empty() && !s.closing)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            state = s;
            if !woke.timed_out() {
                continue;
            }
            Duration::from_millis(1)
        } else {
            BUSY_POLL
        };
        drop(state);
        match connection.recv_timeout(wait) {
            Ok(Ok(event)) => {
                if let Some(session_present) = on_event(event, &mut flight, shared) {
                    connected = true;
                    backoff = opts.backoff;
                    if !session_present {
                        requeue(&mut flight, shared);
                    }
                }
            }
            Ok(Err(e)) => {
                connected = false;
                let mut state = shared.lock();
                state.stats.connection_errors += 1;
                state.stats.last_error = Some(e.to_string());
                // Back off, but wake for the end of the run.
                let until = Instant::now() + backoff;
                let until = deadline.map_or(until, |d| d.min(until));
                while Instant::now() < until {
                    let left = until.saturating_duration_since(Instant::now());
                    let (s, _) = shared
                        .changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    state = s;
                    if state.closing && deadline.is_none() {
                        deadline = Some(Instant::now() + opts.close_timeout);
                        break;
                    }
                }
                backoff = (backoff * 2).min(opts.max_backoff);
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                let mut state = shared.lock();
                state.stats.unsent += (state.queue.len() + flight.len()) as u64;
                state.queue.clear();
                return;
            }
        }
    }
}

/// Books one event of the connection; `Some(session_present)` for a new
/// connection.
fn on_event(event: Event, flight: &mut Flight, shared: &Shared) -> Option<bool> {
    match event {
        Event::Incoming(Packet::ConnAck(ack)) => {
            shared.lock().stats.connections += 1;
            Some(ack.session_present)
        }
        Event::Outgoing(Outgoing::Publish(pkid)) => {
            // A packet id not in flight is a new message: the oldest
            // handed (the client sends in the order handed); one in
            // flight is the client resending it in a resumed session.
            if !flight.sent.iter().any(|(p, _)| *p == pkid) {
                if let Some(m) = flight.handed.pop_front() {
                    flight.sent.push_back((pkid, m));
                }
            }
            None
        }
        Event::Incoming(Packet::PubAck(ack)) => {
            if let Some(at) = flight.sent.iter().position(|(p, _)| *p == ack.pkid) {
                flight.sent.remove(at);
                shared.lock().stats.delivered += 1;
            }
            None
        }
        _ => None,
    }
}

/// A new session: the client forgot what it held; it goes back to the
/// front of the queue, in order, the oldest dropped if it no longer fits.
fn requeue(flight: &mut Flight, shared: &Shared) {
    let back: Vec<Message> = flight
        .sent
        .drain(..)
        .map(|(_, m)| m)
        .chain(flight.handed.drain(..))
        .collect();
    if back.is_empty() {
        return;
    }
    let mut state = shared.lock();
    state.stats.resent += back.len() as u64;
    for m in back.into_iter().rev() {
        state.queue.push_front(m);
    }
    while state.queue.len() > shared.options.queue {
        state.queue.pop_front();
        state.stats.dropped += 1;
        state.stats.resent -= 1;
    }
}

/// Ends the session cleanly when connected (a DISCONNECT the broker
/// sees), bounded in time.
fn disconnect(client: &Client, connection: &mut Connection, connected: bool) {
    if !connected || client.try_disconnect().is_err() {
        return;
    }
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        match connection.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok(Event::Outgoing(Outgoing::Disconnect))) | Ok(Err(_)) | Err(_) => return,
            Ok(Ok(_)) => {}
        }
    }
}
