//! What the unit tests of the command families share: running a script of
//! commands against a store and reading the replies back as text.

use super::connection::Connection;
use super::store::Store;

/// Runs each command (space-separated words) at time `now` through the
/// session-less entry and returns the replies.
pub(crate) fn run_at(store: &mut Store, now: u64, commands: &[&str]) -> String {
    let mut out = Vec::new();
    for command in commands {
        let words: Vec<&[u8]> = command.split(' ').map(str::as_bytes).collect();
        let _ = store.execute(&words, now, &mut out);
    }
    String::from_utf8(out).expect("replies are text in these tests")
}

/// [`run_at`] at time 0.
pub(crate) fn run(store: &mut Store, commands: &[&str]) -> String {
    run_at(store, 0, commands)
}

/// One command's reply, as text.
pub(crate) fn text(store: &mut Store, command: &str) -> String {
    run(store, &[command])
}

/// Feeds `input` (raw protocol bytes) to client `c` at time 0 and returns
/// what it was answered.
pub(crate) fn feed(c: &mut Connection, store: &mut Store, input: &str) -> String {
    let mut out = Vec::new();
    let _ = c.feed(input.as_bytes(), store, 0, &mut out);
    String::from_utf8(out).expect("replies are text in these tests")
}
