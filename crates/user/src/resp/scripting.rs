//! Scripting is out of scope: Lua scripts (`EVAL`, `EVALSHA`, their `_RO`
//! forms, `SCRIPT`) and functions (`FCALL`, `FCALL_RO`, `FUNCTION`) are
//! known commands that answer one clear error,
//! `ERR scripting is not supported by this server`, rather than "unknown
//! command": a client learns the feature is missing, not that it misspelt
//! it. Their table entries carry Redis's arity and flags, so `COMMAND`
//! describes them as Redis does, and argument counts are checked first.

use super::encode::write_error;
use super::table::{spec, Call, Flags, Spec, NO_KEYS};

/// The one answer of every scripting command.
pub(crate) const NOT_SUPPORTED: &[u8] = b"ERR scripting is not supported by this server";

/// Flags of `EVAL`, `EVALSHA` and `FCALL`.
const SCRIPT_CALL: Flags =
    Flags::NOSCRIPT.or(Flags::STALE).or(Flags::SKIP_MONITOR).or(Flags::NO_MANDATORY_KEYS).or(Flags::MOVABLE_KEYS);
/// Flags of their read-only forms.
const SCRIPT_READ: Flags = Flags::READONLY.or(SCRIPT_CALL);

fn refuse(_: &mut super::store::Store, c: &mut Call<'_, '_>) {
    write_error(c.out, NOT_SUPPORTED);
}

/// The scripting commands, all refused.
pub(crate) const SCRIPTING_COMMANDS: &[Spec] = &[
    spec("eval", -3, SCRIPT_CALL, NO_KEYS, refuse),
    spec("evalsha", -3, SCRIPT_CALL, NO_KEYS, refuse),
    spec("eval_ro", -3, SCRIPT_READ, NO_KEYS, refuse),
    spec("evalsha_ro", -3, SCRIPT_READ, NO_KEYS, refuse),
    spec("fcall", -3, SCRIPT_CALL, NO_KEYS, refuse),
    spec("fcall_ro", -3, SCRIPT_READ, NO_KEYS, refuse),
    spec("script", -2, Flags::NONE, NO_KEYS, refuse),
    spec("function", -2, Flags::NONE, NO_KEYS, refuse),
];

#[cfg(test)]
mod tests {
    use crate::resp::Store;

    #[test]
    fn every_scripting_command_is_refused_after_its_arity_check() {
        let mut store = Store::new();
        for command in [
            &["EVAL", "return 1", "0"][..],
            &["evalsha", "abc", "0"],
            &["EVAL_RO", "x", "0"],
            &["EVALSHA_RO", "x", "0"],
            &["FCALL", "f", "0"],
            &["FCALL_RO", "f", "0"],
            &["SCRIPT", "LOAD", "return 1"],
            &["FUNCTION", "LIST"],
        ] {
            let args: Vec<&[u8]> = command.iter().map(|a| a.as_bytes()).collect();
            let mut out = Vec::new();
            let _ = store.execute(&args, 0, &mut out);
            assert_eq!(out, b"-ERR scripting is not supported by this server\r\n", "{command:?}");
        }
        let mut out = Vec::new();
        let _ = store.execute(&[b"EVAL", b"x"], 0, &mut out);
        assert_eq!(out, b"-ERR wrong number of arguments for 'eval' command\r\n");
    }
}
