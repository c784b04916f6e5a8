//! Publish/subscribe between the clients of one store, as Redis 7.0 has it.
//!
//! A client subscribes to channels (`SUBSCRIBE`), to glob patterns of
//! channel names (`PSUBSCRIBE`, matched case-sensitively as Redis's
//! `stringmatchlen` does) and to shard channels (`SSUBSCRIBE`; one store is
//! one shard, so they are simply a second namespace of channels that
//! patterns never match). `PUBLISH` writes the message to every subscriber
//! of the channel, then to every subscriber of each matching pattern — one
//! message per (client, subscription), so a client subscribed twice gets it
//! twice — and answers how many messages it wrote.
//!
//! Every confirmation and message is a push: `>3` in RESP3, `*3` (`*4` for
//! `pmessage`) in RESP2, written in the receiving client's protocol. The
//! publishing client's own copies go straight into its reply, before the
//! count, as in Redis; other clients' go to the store's outbox, which the
//! server delivers. A RESP2 client with any subscription is in the
//! subscribed context, where only the (un)subscribe commands, `PING`, `QUIT`
//! and `RESET` may run (`Store::refuse_in_pubsub_context`) and `PING`
//! answers `*2 pong <message>`; RESP3 clients have no such limit.
//!
//! The store keeps an index from each channel and pattern to its
//! subscribers, in subscription order; each client's own subscriptions are
//! in the client registry. Channel and pattern order in the replies that
//! list several (`UNSUBSCRIBE` without arguments, `PUBSUB CHANNELS`) is
//! unspecified, as Redis's dictionary order is.

use std::collections::{HashMap, HashSet};

use super::encode::{write_array_header, write_bulk, write_error, write_integer, write_null, write_simple, Protocol};
use super::glob::{glob_match, Case};
use super::session::Session;
use super::store::Store;
use super::table::{lookup, resolve, spec, Call, Flags, Spec, NO_KEYS};

/// A client's subscriptions.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subscriptions {
    /// Channels (`SUBSCRIBE`).
    channels: HashSet<Vec<u8>>,
    /// Patterns (`PSUBSCRIBE`), in subscription order.
    patterns: Vec<Vec<u8>>,
    /// Shard channels (`SSUBSCRIBE`).
    shard_channels: HashSet<Vec<u8>>,
}

impl Subscriptions {
    /// Channels and patterns: the count `SUBSCRIBE`'s confirmations carry.
    pub(crate) fn count(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }

    /// Every subscription, shard channels included.
    pub(crate) fn total(&self) -> usize {
        self.count() + self.shard_channels.len()
    }

    /// Channels subscribed (`sub=` in `CLIENT LIST`).
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Patterns subscribed (`psub=`).
    pub(crate) fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    /// Shard channels subscribed (`ssub=`).
    pub(crate) fn shard_count(&self) -> usize {
        self.shard_channels.len()
    }
}

/// Every channel and pattern with its subscribers (client ids, in
/// subscription order).
#[derive(Debug, Default)]
pub(crate) struct PubSub {
    channels: HashMap<Vec<u8>, Vec<u64>>,
    patterns: HashMap<Vec<u8>, Vec<u64>>,
    shard_channels: HashMap<Vec<u8>, Vec<u64>>,
}

impl PubSub {
    /// Channels with at least one subscriber (`pubsub_channels` in `INFO`).
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Patterns with at least one subscriber (`PUBSUB NUMPAT`).
    pub(crate) fn pattern_count(&self) -> usize {
        self.patterns.len()
    }
}

/// The two kinds of channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `SUBSCRIBE`, `PUBLISH`.
    Global,
    /// `SSUBSCRIBE`, `SPUBLISH`.
    Shard,
}

impl Kind {
    fn subscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Global => b"subscribe",
            Kind::Shard => b"ssubscribe",
        }
    }

    fn unsubscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Global => b"unsubscribe",
            Kind::Shard => b"sunsubscribe",
        }
    }

    fn message_word(self) -> &'static [u8] {
        match self {
            Kind::Global => b"message",
            Kind::Shard => b"smessage",
        }
    }
}

/// Flags of the subscribing commands.
const SUBSCRIBING: Flags = Flags::PUBSUB.or(Flags::NOSCRIPT).or(Flags::LOADING).or(Flags::STALE);
/// Flags of the publishing commands.
const PUBLISHING: Flags = Flags::PUBSUB.or(Flags::LOADING).or(Flags::STALE).or(Flags::FAST);
/// Flags of `PUBSUB`'s subcommands.
const INTROSPECTION: Flags = Flags::PUBSUB.or(Flags::LOADING).or(Flags::STALE);

/// The pub/sub commands.
pub(crate) const PUBSUB_COMMANDS: &[Spec] = &[
    spec("subscribe", -2, SUBSCRIBING, NO_KEYS, |s, c| s.cmd_subscribe(c, Kind::Global)),
    spec("unsubscribe", -1, SUBSCRIBING, NO_KEYS, |s, c| s.cmd_unsubscribe(c, Kind::Global)),
    spec("psubscribe", -2, SUBSCRIBING, NO_KEYS, |s, c| s.cmd_psubscribe(c)),
    spec("punsubscribe", -1, SUBSCRIBING, NO_KEYS, |s, c| s.cmd_punsubscribe(c)),
    spec("publish", 3, PUBLISHING, NO_KEYS, |s, c| s.cmd_publish(c, Kind::Global)),
    spec("ssubscribe", -2, SUBSCRIBING, (1, -1, 1), |s, c| s.cmd_subscribe(c, Kind::Shard)),
    spec("sunsubscribe", -1, SUBSCRIBING, (1, -1, 1), |s, c| s.cmd_unsubscribe(c, Kind::Shard)),
    spec("spublish", 3, PUBLISHING, (1, 1, 1), |s, c| s.cmd_publish(c, Kind::Shard)),
    spec("pubsub", -2, Flags::CONTAINER, NO_KEYS, |_, _| {}),
    spec("pubsub|channels", -2, INTROSPECTION, NO_KEYS, |s, c| s.cmd_pubsub_channels(c, Kind::Global)),
    spec("pubsub|numsub", -2, INTROSPECTION, NO_KEYS, |s, c| s.cmd_pubsub_numsub(c, Kind::Global)),
    spec("pubsub|numpat", 2, INTROSPECTION, NO_KEYS, |s, c| {
        write_integer(c.out, s.pubsub.pattern_count() as i64);
    }),
    spec("pubsub|shardchannels", -2, INTROSPECTION, NO_KEYS, |s, c| s.cmd_pubsub_channels(c, Kind::Shard)),
    spec("pubsub|shardnumsub", -2, INTROSPECTION, NO_KEYS, |s, c| s.cmd_pubsub_numsub(c, Kind::Shard)),
    spec("pubsub|help", 2, Flags::LOADING.or(Flags::STALE), NO_KEYS, |_, c| write_help(c.out, PUBSUB_HELP)),
];

/// `PUBSUB HELP`'s lines.
const PUBSUB_HELP: &[&str] = &[
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
];

/// A `HELP` subcommand's reply: one simple string per line.
pub(crate) fn write_help(out: &mut Vec<u8>, lines: &[&str]) {
    write_array_header(out, lines.len());
    for line in lines {
        write_simple(out, line.as_bytes());
    }
}

/// The commands a RESP2 client may send while subscribed.
const ALLOWED_WHILE_SUBSCRIBED: &[&str] =
    &["subscribe", "ssubscribe", "unsubscribe", "sunsubscribe", "psubscribe", "punsubscribe", "ping", "quit", "reset"];

/// Appends the header of a push of `len` elements in `protocol`.
fn write_push_header(out: &mut Vec<u8>, len: usize, protocol: Protocol) {
    match protocol {
        Protocol::Resp2 => write_array_header(out, len),
        Protocol::Resp3 => {
            out.push(b'>');
            out.extend_from_slice(len.to_string().as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// Appends a (un)subscription confirmation: `[word, name or null, count]`.
fn write_confirmation(out: &mut Vec<u8>, protocol: Protocol, word: &[u8], name: Option<&[u8]>, count: usize) {
    write_push_header(out, 3, protocol);
    write_bulk(out, word);
    match name {
        Some(name) => write_bulk(out, name),
        None => write_null(out, protocol),
    }
    write_integer(out, count as i64);
}

/// `PUBSUB`'s error for a subcommand called with the wrong arguments.
fn write_subcommand_syntax_error(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut message = b"ERR unknown subcommand or wrong number of arguments for '".to_vec();
    message.extend_from_slice(super::command::c_string(args[1], 128));
    message.extend_from_slice(b"'. Try PUBSUB HELP.");
    write_error(out, &message);
}

impl Store {
    /// Whether `args` must be refused because the client (RESP2, with
    /// subscriptions) is in the subscribed context; if so the error is
    /// appended to `out`. Unknown commands and wrong argument counts are
    /// left to the ordinary path, which reports them first, as Redis does.
    #[inline]
    pub(crate) fn refuse_in_pubsub_context(session: &Session, args: &[&[u8]], out: &mut Vec<u8>) -> bool {
        session.subscribed && session.protocol == Protocol::Resp2 && Store::refuse_subscribed(args, out)
    }

    /// [`Store::refuse_in_pubsub_context`] for a client in that context.
    fn refuse_subscribed(args: &[&[u8]], out: &mut Vec<u8>) -> bool {
        let Some(&name) = args.first() else { return false };
        let name = match lookup(name).and_then(|spec| resolve(spec, args)) {
            Some(spec) if super::command::arity_ok(spec.arity, args.len()) => spec.text,
            _ => return false,
        };
        if ALLOWED_WHILE_SUBSCRIBED.contains(&name) {
            return false;
        }
        let reason = format!(
            "Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
        );
        // Redis words a refused `EXEC` as an aborted transaction.
        let prefix = if name == "exec" { "EXECABORT Transaction discarded because of: " } else { "ERR " };
        let message = format!("{prefix}{reason}");
        write_error(out, message.as_bytes());
        true
    }

    /// The client's subscriptions (registering it if needed).
    fn subscriptions(&mut self, id: u64, now: u64) -> &mut Subscriptions {
        &mut self.clients.entry(id, now).subscriptions
    }

    /// Updates the session's subscribed-context flag after a (un)subscribe.
    fn sync_subscribed(&mut self, session: &mut Session, now: u64) {
        session.subscribed = self.subscriptions(session.id, now).total() > 0;
    }

    /// `SUBSCRIBE channel ...` and `SSUBSCRIBE shardchannel ...`.
    fn cmd_subscribe(&mut self, c: &mut Call<'_, '_>, kind: Kind) {
        let id = c.session.id;
        if kind == Kind::Shard && self.clients.get(id).is_some_and(|client| client.multi.is_some()) {
            return write_error(c.out, b"ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
        }
        let protocol = c.session.protocol;
        for &channel in &c.args[1..] {
            let subscriptions = self.subscriptions(id, c.now);
            let set = match kind {
                Kind::Global => &mut subscriptions.channels,
                Kind::Shard => &mut subscriptions.shard_channels,
            };
            if set.insert(channel.to_vec()) {
                let index = match kind {
                    Kind::Global => &mut self.pubsub.channels,
                    Kind::Shard => &mut self.pubsub.shard_channels,
                };
                index.entry(channel.to_vec()).or_default().push(id);
            }
            let subscriptions = self.subscriptions(id, c.now);
            let count = if kind == Kind::Global { subscriptions.count() } else { subscriptions.shard_count() };
            write_confirmation(c.out, protocol, kind.subscribe_word(), Some(channel), count);
        }
        self.sync_subscribed(c.session, c.now);
    }

    /// `UNSUBSCRIBE [channel ...]` and `SUNSUBSCRIBE [shardchannel ...]`.
    fn cmd_unsubscribe(&mut self, c: &mut Call<'_, '_>, kind: Kind) {
        let (id, protocol) = (c.session.id, c.session.protocol);
        let named: Vec<Vec<u8>> = if c.args.len() > 1 {
            c.args[1..].iter().map(|channel| channel.to_vec()).collect()
        } else {
            let subscriptions = self.subscriptions(id, c.now);
            let set = if kind == Kind::Global { &subscriptions.channels } else { &subscriptions.shard_channels };
            set.iter().cloned().collect()
        };
        if named.is_empty() {
            let subscriptions = self.subscriptions(id, c.now);
            let count = if kind == Kind::Global { subscriptions.count() } else { subscriptions.shard_count() };
            write_confirmation(c.out, protocol, kind.unsubscribe_word(), None, count);
        }
        for channel in &named {
            self.unsubscribe_channel(id, channel, kind, c.now);
            let subscriptions = self.subscriptions(id, c.now);
            let count = if kind == Kind::Global { subscriptions.count() } else { subscriptions.shard_count() };
            write_confirmation(c.out, protocol, kind.unsubscribe_word(), Some(channel), count);
        }
        self.sync_subscribed(c.session, c.now);
    }

    /// `PSUBSCRIBE pattern ...`.
    fn cmd_psubscribe(&mut self, c: &mut Call<'_, '_>) {
        let (id, protocol) = (c.session.id, c.session.protocol);
        for &pattern in &c.args[1..] {
            let subscriptions = self.subscriptions(id, c.now);
            if !subscriptions.patterns.iter().any(|p| p == pattern) {
                subscriptions.patterns.push(pattern.to_vec());
                self.pubsub.patterns.entry(pattern.to_vec()).or_default().push(id);
            }
            let count = self.subscriptions(id, c.now).count();
            write_confirmation(c.out, protocol, b"psubscribe", Some(pattern), count);
        }
        self.sync_subscribed(c.session, c.now);
    }

    /// `PUNSUBSCRIBE [pattern ...]`.
    fn cmd_punsubscribe(&mut self, c: &mut Call<'_, '_>) {
        let (id, protocol) = (c.session.id, c.session.protocol);
        let named: Vec<Vec<u8>> = if c.args.len() > 1 {
            c.args[1..].iter().map(|pattern| pattern.to_vec()).collect()
        } else {
            self.subscriptions(id, c.now).patterns.clone()
        };
        if named.is_empty() {
            let count = self.subscriptions(id, c.now).count();
            write_confirmation(c.out, protocol, b"punsubscribe", None, count);
        }
        for pattern in &named {
            self.unsubscribe_pattern(id, pattern, c.now);
            let count = self.subscriptions(id, c.now).count();
            write_confirmation(c.out, protocol, b"punsubscribe", Some(pattern), count);
        }
        self.sync_subscribed(c.session, c.now);
    }

    /// Removes client `id`'s subscription to `channel`, if it has one.
    fn unsubscribe_channel(&mut self, id: u64, channel: &[u8], kind: Kind, now: u64) {
        let subscriptions = self.subscriptions(id, now);
        let set = match kind {
            Kind::Global => &mut subscriptions.channels,
            Kind::Shard => &mut subscriptions.shard_channels,
        };
        if set.remove(channel) {
            let index = match kind {
                Kind::Global => &mut self.pubsub.channels,
                Kind::Shard => &mut self.pubsub.shard_channels,
            };
            remove_subscriber(index, channel, id);
        }
    }

    /// Removes client `id`'s subscription to `pattern`, if it has one.
    fn unsubscribe_pattern(&mut self, id: u64, pattern: &[u8], now: u64) {
        let subscriptions = self.subscriptions(id, now);
        if let Some(at) = subscriptions.patterns.iter().position(|p| p == pattern) {
            subscriptions.patterns.remove(at);
            remove_subscriber(&mut self.pubsub.patterns, pattern, id);
        }
    }

    /// Removes client `id` (already out of the registry, whose
    /// subscriptions were `subscriptions`) from every index entry.
    pub(crate) fn unsubscribe_everything(&mut self, id: u64, subscriptions: &Subscriptions) {
        for channel in &subscriptions.channels {
            remove_subscriber(&mut self.pubsub.channels, channel, id);
        }
        for pattern in &subscriptions.patterns {
            remove_subscriber(&mut self.pubsub.patterns, pattern, id);
        }
        for channel in &subscriptions.shard_channels {
            remove_subscriber(&mut self.pubsub.shard_channels, channel, id);
        }
    }

    /// Ends every subscription of the session's client without a word
    /// (`RESET`).
    pub(crate) fn unsubscribe_silently(&mut self, session: &mut Session, now: u64) {
        let subscriptions = std::mem::take(self.subscriptions(session.id, now));
        self.unsubscribe_everything(session.id, &subscriptions);
        session.subscribed = false;
    }

    /// `PUBLISH channel message` and `SPUBLISH shardchannel message`.
    fn cmd_publish(&mut self, c: &mut Call<'_, '_>, kind: Kind) {
        let (channel, message) = (c.args[1], c.args[2]);
        let me = c.session.id;
        let mut receivers = 0;
        let index = match kind {
            Kind::Global => &self.pubsub.channels,
            Kind::Shard => &self.pubsub.shard_channels,
        };
        let mut deliveries: Vec<(u64, Option<&[u8]>)> = Vec::new();
        if let Some(subscribers) = index.get(channel) {
            deliveries.extend(subscribers.iter().map(|&id| (id, None)));
        }
        if kind == Kind::Global {
            for (pattern, subscribers) in &self.pubsub.patterns {
                if glob_match(pattern, channel, Case::Sensitive) {
                    deliveries.extend(subscribers.iter().map(|&id| (id, Some(pattern.as_slice()))));
                }
            }
        }
        let mut outbox = Vec::new();
        for (id, pattern) in deliveries {
            let Some(client) = self.clients.get(id) else { continue };
            let mut bytes = Vec::with_capacity(message.len() + channel.len() + 48);
            match pattern {
                None => {
                    write_push_header(&mut bytes, 3, client.protocol);
                    write_bulk(&mut bytes, kind.message_word());
                }
                Some(pattern) => {
                    write_push_header(&mut bytes, 4, client.protocol);
                    write_bulk(&mut bytes, b"pmessage");
                    write_bulk(&mut bytes, pattern);
                }
            }
            write_bulk(&mut bytes, channel);
            write_bulk(&mut bytes, message);
            receivers += 1;
            if id == me {
                c.out.extend_from_slice(&bytes);
            } else {
                outbox.push((id, bytes));
            }
        }
        self.outbox.extend(outbox);
        write_integer(c.out, receivers);
    }

    /// `PUBSUB CHANNELS [pattern]` and `PUBSUB SHARDCHANNELS [pattern]`.
    fn cmd_pubsub_channels(&mut self, c: &mut Call<'_, '_>, kind: Kind) {
        if c.args.len() > 3 {
            return write_subcommand_syntax_error(c.out, c.args);
        }
        let pattern = c.args.get(2);
        let index = if kind == Kind::Global { &self.pubsub.channels } else { &self.pubsub.shard_channels };
        let matching: Vec<&Vec<u8>> =
            index.keys().filter(|channel| pattern.map_or(true, |p| glob_match(p, channel, Case::Sensitive))).collect();
        write_array_header(c.out, matching.len());
        for channel in matching {
            write_bulk(c.out, channel);
        }
    }

    /// `PUBSUB NUMSUB [channel ...]` and `PUBSUB SHARDNUMSUB [channel ...]`.
    fn cmd_pubsub_numsub(&mut self, c: &mut Call<'_, '_>, kind: Kind) {
        let index = if kind == Kind::Global { &self.pubsub.channels } else { &self.pubsub.shard_channels };
        write_array_header(c.out, (c.args.len() - 2) * 2);
        for channel in &c.args[2..] {
            write_bulk(c.out, channel);
            write_integer(c.out, index.get(*channel).map_or(0, Vec::len) as i64);
        }
    }
}

/// Removes `id` from the subscribers of `name` in `index`, and the entry if
/// none is left.
fn remove_subscriber(index: &mut HashMap<Vec<u8>, Vec<u64>>, name: &[u8], id: u64) {
    if let Some(subscribers) = index.get_mut(name) {
        subscribers.retain(|&subscriber| subscriber != id);
        if subscribers.is_empty() {
            index.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::resp::testing::feed;
    use crate::resp::{Connection, Store};

    #[test]
    fn the_index_follows_subscriptions_and_closed_clients() {
        let mut store = Store::new();
        let (mut a, mut b) = (Connection::default(), Connection::default());
        feed(&mut a, &mut store, "SUBSCRIBE x y\r\nPSUBSCRIBE x*\r\n");
        feed(&mut b, &mut store, "SUBSCRIBE x\r\n");
        assert_eq!(store.pubsub.channel_count(), 2);
        assert_eq!(store.pubsub.pattern_count(), 1);
        assert_eq!(
            feed(&mut b, &mut store, "UNSUBSCRIBE x\r\nPUBLISH xa m\r\n"),
            concat!("*3\r\n$11\r\nunsubscribe\r\n$1\r\nx\r\n:0\r\n", ":1\r\n")
        );
        let outbox = store.take_outbox();
        assert_eq!(outbox.len(), 1);
        assert_eq!(outbox[0].0, a.id());
        assert_eq!(outbox[0].1, b"*4\r\n$8\r\npmessage\r\n$2\r\nx*\r\n$2\r\nxa\r\n$1\r\nm\r\n");
        store.forget_client(a.id());
        assert_eq!(store.pubsub.channel_count(), 0);
        assert_eq!(store.pubsub.pattern_count(), 0);
        assert_eq!(feed(&mut b, &mut store, "PUBLISH x m\r\n"), ":0\r\n");
    }

    #[test]
    fn resp3_publishers_get_their_own_push_before_the_count() {
        let mut store = Store::new();
        let mut a = Connection::default();
        feed(&mut a, &mut store, "HELLO 3\r\n");
        assert_eq!(feed(&mut a, &mut store, "SUBSCRIBE c\r\n"), ">3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
        assert_eq!(
            feed(&mut a, &mut store, "PUBLISH c hi\r\nGET k\r\n"),
            ">3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$2\r\nhi\r\n:1\r\n_\r\n"
        );
        assert!(store.take_outbox().is_empty());
    }
}
