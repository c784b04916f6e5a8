//! `INFO`: the server's state in Redis's text format, with the values
//! monitoring tools read real.
//!
//! `redis-cli --stat` reads the keys of each `db<n>` line, `used_memory`,
//! `connected_clients`, `blocked_clients`, `total_commands_processed`,
//! `total_connections_received` and the persistence flags; every one is
//! here and counts what it says (connections are the client registry's,
//! memory is the estimate of [`memory`](super::memory)). A line appears only
//! where its value is true of this store: there is no persistence (every
//! `*_in_progress` is 0), no replication (`role:master`, no replicas), no
//! eviction; facts only the server around the store knows (its process, its
//! port, its uptime, `maxclients`) come from
//! [`ServerInfo`](super::session::ServerInfo) and are left out when it does
//! not tell. Sections follow Redis's order and names; `INFO` without
//! arguments, `all`, `default` and `everything` give every section.

use super::encode::write_verbatim;
use super::server::{LOADING_STALE, REDIS_VERSION};
use super::store::{Store, DATABASES};
use super::table::{spec, Spec, NO_KEYS};

/// `INFO`.
pub(crate) const INFO_COMMANDS: &[Spec] =
    &[spec("info", -1, LOADING_STALE, NO_KEYS, |s, c| s.cmd_info(c.args, c.now, c.out))];

/// Sections in the order they are written.
const SECTIONS: &[&str] = &["server", "clients", "memory", "persistence", "stats", "replication", "keyspace"];

/// A byte count as Redis writes it for people (`bytesToHuman`).
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 5] = [(1 << 10, "K"), (1 << 20, "M"), (1 << 30, "G"), (1 << 40, "T"), (1 << 50, "P")];
    if n < 1024 {
        return format!("{n}B");
    }
    for (size, unit) in UNITS {
        if n < size << 10 {
            return format!("{:.2}{unit}", n as f64 / size as f64);
        }
    }
    format!("{n}B")
}

impl Store {
    /// `INFO [section ...]`: the sections asked for (all by default), in
    /// Redis's text format.
    pub(crate) fn cmd_info(&mut self, args: &[&[u8]], now: u64, out: &mut Vec<u8>) {
        let everything = args.len() == 1
            || args[1..]
                .iter()
                .any(|arg| [&b"all"[..], b"everything", b"default"].iter().any(|s| arg.eq_ignore_ascii_case(s)));
        let mut text = String::new();
        for section in SECTIONS {
            if !everything && !args[1..].iter().any(|arg| arg.eq_ignore_ascii_case(section.as_bytes())) {
                continue;
            }
            let body = self.info_section(section, now);
            if !text.is_empty() {
                text.push_str("\r\n");
            }
            text.push_str(&body);
        }
        write_verbatim(out, text.as_bytes(), self.protocol);
    }

    /// One `INFO` section with its `# Title` line.
    fn info_section(&mut self, section: &str, now: u64) -> String {
        let mut lines: Vec<String> = Vec::new();
        match section {
            "server" => {
                let info = &self.info;
                lines.push(format!("redis_version:{REDIS_VERSION}"));
                lines.push(format!("granule_version:{}", env!("CARGO_PKG_VERSION")));
                lines.push("redis_mode:standalone".into());
                lines.push(format!("os:{} {}", std::env::consts::OS, std::env::consts::ARCH));
                lines.push(format!("arch_bits:{}", usize::BITS));
                lines.extend(info.process_id.map(|pid| format!("process_id:{pid}")));
                lines.extend(info.tcp_port.map(|port| format!("tcp_port:{port}")));
                if let Some(seconds) = info.started_ms.map(|t| now.saturating_sub(t) / 1000) {
                    lines.push(format!("uptime_in_seconds:{seconds}"));
                    lines.push(format!("uptime_in_days:{}", seconds / 86_400));
                }
                lines.extend(info.extra.iter().map(|(name, value)| format!("{name}:{value}")));
            }
            "clients" => {
                lines.push(format!("connected_clients:{}", self.clients.len()));
                lines.push("cluster_connections:0".into());
                lines.extend(self.info.max_clients.map(|n| format!("maxclients:{n}")));
                lines.push(format!("blocked_clients:{}", self.clients.blocked()));
                lines.push("tracking_clients:0".into());
            }
            "memory" => {
                let used = self.used_memory();
                self.memory_peak = self.memory_peak.max(used);
                let (used, peak) = (used as u64, self.memory_peak as u64);
                lines.push(format!("used_memory:{used}"));
                lines.push(format!("used_memory_human:{}", human_bytes(used)));
                lines.push(format!("used_memory_peak:{peak}"));
                lines.push(format!("used_memory_peak_human:{}", human_bytes(peak)));
                lines.push(format!("used_memory_dataset:{used}"));
                lines.push("maxmemory:0".into());
                lines.push("maxmemory_human:0B".into());
                lines.push("maxmemory_policy:noeviction".into());
            }
            "persistence" => {
                for line in [
                    "loading:0",
                    "async_loading:0",
                    "rdb_bgsave_in_progress:0",
                    "aof_enabled:0",
                    "aof_rewrite_in_progress:0",
                ] {
                    lines.push(line.into());
                }
            }
            "stats" => {
                let stats = self.stats;
                lines.push(format!("total_connections_received:{}", self.clients.registered));
                lines.push(format!("total_commands_processed:{}", stats.commands_processed));
                lines.push(format!("expired_keys:{}", stats.expired_keys));
                lines.push("evicted_keys:0".into());
                lines.push(format!("keyspace_hits:{}", stats.keyspace_hits));
                lines.push(format!("keyspace_misses:{}", stats.keyspace_misses));
                lines.push(format!("pubsub_channels:{}", self.pubsub.channel_count()));
                lines.push(format!("pubsub_patterns:{}", self.pubsub.pattern_count()));
            }
            "replication" => {
                for line in [
                    "role:master",
                    "connected_slaves:0",
                    "master_failover_state:no-failover",
                    "master_repl_offset:0",
                    "second_repl_offset:-1",
                    "repl_backlog_active:0",
                ] {
                    lines.push(line.into());
                }
            }
            "keyspace" => {
                // Every database that holds keys, as Redis lists them.
                for db in 0..DATABASES {
                    let (keys, expires, ttl) = self.db_counts(db, now);
                    if keys > 0 {
                        lines.push(format!("db{db}:keys={keys},expires={expires},avg_ttl={ttl}"));
                    }
                }
            }
            _ => {}
        }
        let mut title = section.to_string();
        title[..1].make_ascii_uppercase();
        let mut body = format!("# {title}\r\n");
        for line in lines {
            // A line must stay one line, whatever the caller put in `extra`.
            body.push_str(&line.replace(['\r', '\n'], " "));
            body.push_str("\r\n");
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resp::testing::text;

    #[test]
    fn human_bytes_follow_redis() {
        assert_eq!(human_bytes(0), "0B");
        assert_eq!(human_bytes(1023), "1023B");
        assert_eq!(human_bytes(1024), "1.00K");
        assert_eq!(human_bytes(988_592), "965.42K");
        assert_eq!(human_bytes(6_680_576), "6.37M");
        assert_eq!(human_bytes(25_276_514_304), "23.54G");
        assert_eq!(human_bytes((1 << 60) - 1), "1024.00P");
        assert_eq!(human_bytes(u64::MAX), "18446744073709551615B");
    }

    #[test]
    fn info_reports_the_keyspace_and_counters() {
        let mut store = Store::new();
        assert_eq!(text(&mut store, "INFO keyspace"), "$12\r\n# Keyspace\r\n\r\n");
        let _ = text(&mut store, "SET a 1 EX 100");
        let _ = text(&mut store, "SET b 1");
        assert_eq!(
            text(&mut store, "INFO keyspace"),
            "$49\r\n# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl=100000\r\n\r\n"
        );
        let all = text(&mut store, "INFO");
        assert!(all.contains("# Server\r\nredis_version:7.0.0\r\ngranule_version:"));
        assert!(all.contains("\r\n\r\n# Clients\r\nconnected_clients:1\r\n"));
        assert!(all.contains("\r\nblocked_clients:0\r\n"));
        assert!(all.contains("\r\n# Memory\r\nused_memory:"));
        assert!(all.contains("total_commands_processed:4\r\n"));
        assert!(all.contains("total_connections_received:1\r\n"));
        assert!(all.contains("# Keyspace\r\ndb0:keys=2"));
        assert_eq!(text(&mut store, "INFO nothing"), "$0\r\n\r\n");
    }
}
