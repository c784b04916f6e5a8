//! `CONFIG GET`, `CONFIG SET`, `CONFIG RESETSTAT`: the parameters whose
//! values are true of this store, and nothing else.
//!
//! `CONFIG GET` lists a parameter only where its value describes the store
//! as it is: no persistence (`save` is empty, `appendonly` is `no`), one
//! database, no memory limit and so no eviction (`maxmemory` 0,
//! `maxmemory-policy noeviction`), idle clients never closed (`timeout` 0),
//! no keyspace notifications; `port` and `maxclients` when the server
//! around the store tells them ([`ServerInfo`](super::session::ServerInfo)).
//! Patterns match names without case, as in Redis; the order of the
//! answer is unspecified (Redis answers in its dictionary's order).
//!
//! `CONFIG SET` checks every pair as Redis does — unknown names, immutable
//! parameters, duplicates, then each value's syntax, with Redis's error
//! texts — and then succeeds only if every value is the one the store
//! already has, since nothing here can change: setting `maxmemory 0` is
//! fine, `maxmemory 1gb` is refused with `CONFIG SET failed (possibly
//! related to argument 'maxmemory') - this server cannot change it from
//! '0'` (that reason is this store's; Redis would have applied it).

use super::command::{c_string, write_ok, SYNTAX};
use super::encode::{write_bulk, write_error, write_map_header};
use super::glob::{glob_match, Case};
use super::number::parse_i64;
use super::pubsub::write_help;
use super::server::LOADING_STALE;
use super::store::{Store, DATABASES};
use super::table::{spec, Flags, Spec, NO_KEYS};

/// Flags of `CONFIG`'s subcommands.
const ADMIN: Flags = Flags::ADMIN.or(Flags::NOSCRIPT).or(LOADING_STALE);

/// `CONFIG` and its subcommands.
pub(crate) const CONFIG_COMMANDS: &[Spec] = &[
    spec("config", -2, Flags::CONTAINER, NO_KEYS, |_, _| {}),
    spec("config|get", -3, ADMIN, NO_KEYS, |s, c| s.cmd_config_get(c.args, c.out)),
    spec("config|set", -4, ADMIN, NO_KEYS, |s, c| s.cmd_config_set(c.args, c.out)),
    spec("config|resetstat", 2, ADMIN, NO_KEYS, |s, c| {
        s.stats = Default::default();
        s.clients.registered = 0;
        write_ok(c.out);
    }),
    spec("config|help", 2, LOADING_STALE, NO_KEYS, |_, c| write_help(c.out, CONFIG_HELP)),
];

/// `CONFIG HELP`'s lines: the subcommands this store has, in Redis's words.
const CONFIG_HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "HELP",
    "    Prints this help.",
];

/// The eviction policies Redis knows (only `noeviction` is true here).
const POLICIES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
];

/// How a parameter's values are written.
#[derive(Clone, Copy, Debug)]
enum Syntax {
    /// `yes` or `no`.
    Bool,
    /// An integer in a range.
    Integer(i64, i64),
    /// A byte count with an optional unit (`1gb`).
    Memory,
    /// One of a list of words.
    Word(&'static [&'static str]),
    /// `save`'s pairs of integers (or nothing).
    SavePoints,
    /// Anything.
    Text,
}

/// One parameter.
struct Param {
    name: &'static str,
    syntax: Syntax,
    /// Redis cannot change it at run time either.
    immutable: bool,
}

/// Every parameter this store may report, in a fixed order.
const PARAMS: &[Param] = &[
    Param { name: "save", syntax: Syntax::SavePoints, immutable: false },
    Param { name: "appendonly", syntax: Syntax::Bool, immutable: false },
    Param { name: "databases", syntax: Syntax::Integer(1, i32::MAX as i64), immutable: true },
    Param { name: "maxmemory", syntax: Syntax::Memory, immutable: false },
    Param { name: "maxmemory-policy", syntax: Syntax::Word(POLICIES), immutable: false },
    Param { name: "timeout", syntax: Syntax::Integer(0, i32::MAX as i64), immutable: false },
    Param { name: "notify-keyspace-events", syntax: Syntax::Text, immutable: false },
    Param { name: "maxclients", syntax: Syntax::Integer(1, u32::MAX as i64), immutable: false },
    Param { name: "port", syntax: Syntax::Integer(0, 65535), immutable: false },
];

impl Syntax {
    /// The value `text` means, in canonical form, or Redis's complaint.
    fn parse(self, text: &[u8]) -> Result<String, String> {
        let text_str = String::from_utf8_lossy(text);
        match self {
            Syntax::Bool if text.eq_ignore_ascii_case(b"yes") => Ok("yes".into()),
            Syntax::Bool if text.eq_ignore_ascii_case(b"no") => Ok("no".into()),
            Syntax::Bool => Err("argument must be 'yes' or 'no'".into()),
            Syntax::Integer(min, max) => match parse_i64(text) {
                None => Err("argument couldn't be parsed into an integer".into()),
                Some(n) if n < min || n > max => Err(format!("argument must be between {min} and {max} inclusive")),
                Some(n) => Ok(n.to_string()),
            },
            Syntax::Memory => parse_memory(text).map(|n| n.to_string()).ok_or("argument must be a memory value".into()),
            Syntax::Word(words) => words
                .iter()
                .find(|word| text.eq_ignore_ascii_case(word.as_bytes()))
                .map(|word| word.to_string())
                .ok_or_else(|| format!("argument(s) must be one of the following: {}", words.join(", "))),
            Syntax::SavePoints => {
                let words: Vec<&str> = text_str.split(' ').filter(|w| !w.is_empty()).collect();
                if words.len() % 2 == 1 || words.iter().any(|w| parse_i64(w.as_bytes()).is_none()) {
                    return Err("Invalid save parameters".into());
                }
                Ok(words.join(" "))
            }
            Syntax::Text => Ok(text_str.into_owned()),
        }
    }
}

/// A memory amount as Redis's `memtoull` reads it: digits and an optional
/// unit (`b`, `k`, `kb`, `m`, `mb`, `g`, `gb`, any case).
fn parse_memory(text: &[u8]) -> Option<u64> {
    let digits = text.iter().take_while(|c| c.is_ascii_digit()).count();
    let (number, unit) = text.split_at(digits);
    let multiplier: u64 = match &unit.to_ascii_lowercase()[..] {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1000 * 1000,
        b"mb" => 1024 * 1024,
        b"g" => 1000 * 1000 * 1000,
        b"gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    let number: u64 = std::str::from_utf8(number).ok()?.parse().ok()?;
    number.checked_mul(multiplier)
}

impl Store {
    /// The value of parameter `name` as this store has it, `None` if the
    /// store cannot tell.
    fn config_value(&self, name: &str) -> Option<String> {
        Some(match name {
            "save" | "notify-keyspace-events" => String::new(),
            "appendonly" => "no".into(),
            "databases" => DATABASES.to_string(),
            "maxmemory" | "timeout" => "0".into(),
            "maxmemory-policy" => "noeviction".into(),
            "maxclients" => self.info.max_clients?.to_string(),
            "port" => self.info.tcp_port?.to_string(),
            _ => return None,
        })
    }

    /// The parameter called `name` (any case) with a value here.
    fn config_param(&self, name: &[u8]) -> Option<&'static Param> {
        PARAMS
            .iter()
            .find(|param| name.eq_ignore_ascii_case(param.name.as_bytes()))
            .filter(|param| self.config_value(param.name).is_some())
    }

    /// `CONFIG GET pattern [pattern ...]`: each parameter once, named as
    /// asked when asked by exact name (as Redis echoes it), by its own name
    /// when a pattern matched it.
    fn cmd_config_get(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        let mut matching: Vec<(&'static str, Vec<u8>, String)> = Vec::new();
        for &pattern in &args[2..] {
            let exact = !pattern.iter().any(|c| b"[*?".contains(c));
            for param in PARAMS {
                let hit = if exact {
                    pattern.eq_ignore_ascii_case(param.name.as_bytes())
                } else {
                    glob_match(pattern, param.name.as_bytes(), Case::Insensitive)
                };
                if !hit || matching.iter().any(|(name, _, _)| *name == param.name) {
                    continue;
                }
                if let Some(value) = self.config_value(param.name) {
                    let shown = if exact { pattern.to_vec() } else { param.name.as_bytes().to_vec() };
                    matching.push((param.name, shown, value));
                }
            }
        }
        write_map_header(out, matching.len(), self.protocol);
        for (_, shown, value) in matching {
            write_bulk(out, &shown);
            write_bulk(out, value.as_bytes());
        }
    }

    /// `CONFIG SET parameter value [parameter value ...]`.
    fn cmd_config_set(&mut self, args: &[&[u8]], out: &mut Vec<u8>) {
        if args.len() % 2 == 1 {
            return write_error(out, SYNTAX);
        }
        let failed = |out: &mut Vec<u8>, name: &str, reason: &str| {
            let message = format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {reason}");
            write_error(out, message.as_bytes());
        };
        let mut params: Vec<(&'static Param, &[u8])> = Vec::new();
        for pair in args[2..].chunks_exact(2) {
            let Some(param) = self.config_param(pair[0]) else {
                let mut message = b"ERR Unknown option or number of arguments for CONFIG SET - '".to_vec();
                message.extend_from_slice(c_string(pair[0], usize::MAX));
                message.push(b'\'');
                return write_error(out, &message);
            };
            if param.immutable {
                return failed(out, &String::from_utf8_lossy(pair[0]), "can't set immutable config");
            }
            if params.iter().any(|(seen, _)| seen.name == param.name) {
                return failed(out, &String::from_utf8_lossy(pair[0]), "duplicate parameter");
            }
            params.push((param, pair[1]));
        }
        let mut values = Vec::with_capacity(params.len());
        for &(param, text) in &params {
            match param.syntax.parse(text) {
                Ok(value) => values.push(value),
                Err(reason) => return failed(out, param.name, &reason),
            }
        }
        for (&(param, _), value) in params.iter().zip(&values) {
            let current = self.config_value(param.name).unwrap_or_default();
            if *value != current {
                return failed(out, param.name, &format!("this server cannot change it from '{current}'"));
            }
        }
        write_ok(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(store: &mut Store, command: &str) -> String {
        let words: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
        let mut out = Vec::new();
        let _ = store.execute(&words, 0, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn values_parse_like_redis() {
        assert_eq!(parse_memory(b"1gb"), Some(1 << 30));
        assert_eq!(parse_memory(b"2K"), Some(2000));
        assert_eq!(parse_memory(b"0"), Some(0));
        assert_eq!(parse_memory(b"1x"), None);
        assert_eq!(parse_memory(b""), None);
        assert_eq!(parse_memory(b"99999999999999999999"), None);
        assert_eq!(Syntax::SavePoints.parse(b" 3600  1 "), Ok("3600 1".into()));
        assert!(Syntax::SavePoints.parse(b"3600").is_err());
        assert_eq!(Syntax::Word(POLICIES).parse(b"NoEviction"), Ok("noeviction".into()));
    }

    #[test]
    fn only_true_values_are_reported_and_accepted() {
        let mut store = Store::new();
        assert_eq!(run(&mut store, "CONFIG GET port"), "*0\r\n");
        store.server_info_mut().tcp_port = Some(6379);
        assert_eq!(run(&mut store, "CONFIG GET PORT"), "*2\r\n$4\r\nPORT\r\n$4\r\n6379\r\n");
        assert_eq!(run(&mut store, "CONFIG GET p?rt"), "*2\r\n$4\r\nport\r\n$4\r\n6379\r\n");
        assert_eq!(run(&mut store, "CONFIG SET maxmemory 0mb timeout 0 save"), "-ERR syntax error\r\n");
        assert_eq!(run(&mut store, "CONFIG SET maxmemory 0mb timeout 0"), "+OK\r\n");
        assert_eq!(
            run(&mut store, "CONFIG SET maxmemory 1gb"),
            "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - this server cannot change it from '0'\r\n"
        );
        assert_eq!(
            run(&mut store, "CONFIG SET maxclients 10"),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'maxclients'\r\n"
        );
    }
}
