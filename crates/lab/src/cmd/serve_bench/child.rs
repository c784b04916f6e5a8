//! A child process that is stopped and reaped on every way out: when its
//! guard drops, after an error, a panic or Ctrl-C alike.
//!
//! Its standard output and error, when captured, are read by threads of
//! their own (a child never blocks on a full pipe), the last
//! [`KEEP`] bytes kept.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Bytes of a captured stream kept (its end).
const KEEP: usize = 64 << 10;
/// How often a waiting loop looks at a child.
const POLL: Duration = Duration::from_millis(5);
/// How long a reader thread may take to see the end of its pipe once its
/// child exited (a grandchild holding the pipe leaves the thread behind).
const DRAIN: Duration = Duration::from_secs(1);

/// Set when this process is asked to stop (SIGINT): waits end early.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Catch Ctrl-C (SIGINT) so that the guards' drops stop every child before
/// this process exits; a second Ctrl-C exits at once.
pub fn catch_interrupts() -> Result<()> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            eprintln!("granule serve-bench: interrupted again, exiting now");
            std::process::exit(130);
        }
    })
    .context("installing the Ctrl-C handler")
}

/// Whether Ctrl-C was pressed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// How a child is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `SIGKILL` at once.
    Kill,
    /// `SIGINT` (its clean shutdown), then `SIGKILL` if it still runs after
    /// the bound.
    Interrupt(Duration),
}

/// A running child: stopped as its [`Stop`] says and reaped when dropped.
#[derive(Debug)]
pub struct Child {
    /// What it is, for messages.
    name: String,
    child: std::process::Child,
    stop: Stop,
    /// Its exit status, once reaped.
    status: Option<ExitStatus>,
    out: Option<JoinHandle<Vec<u8>>>,
    err: Option<JoinHandle<Vec<u8>>>,
}

impl Child {
    /// Start `cmd` with standard input closed, standard error kept, and
    /// standard output kept when `capture_stdout` (else discarded).
    pub fn spawn(name: &str, cmd: &mut Command, capture_stdout: bool, stop: Stop) -> Result<Self> {
        cmd.stdin(Stdio::null()).stderr(Stdio::piped());
        cmd.stdout(if capture_stdout { Stdio::piped() } else { Stdio::null() });
        let mut child = cmd.spawn().with_context(|| format!("starting {name}"))?;
        let out = child.stdout.take().map(reader);
        let err = child.stderr.take().map(reader);
        Ok(Self { name: name.to_string(), child, stop, status: None, out, err })
    }

    /// Its process id (valid until it is reaped, which only this guard
    /// does).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// What it is.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its exit status if it has exited (reaping it).
    pub fn exited(&mut self) -> Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.child.try_wait().with_context(|| format!("polling {}", self.name))?;
        }
        Ok(self.status)
    }

    /// Stop it as its [`Stop`] says and reap it; its exit status.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        if let Ok(Some(s)) = self.exited() {
            return Some(s);
        }
        if let Stop::Interrupt(bound) = self.stop {
            if sigint(self.child.id()) {
                let deadline = Instant::now() + bound;
                while Instant::now() < deadline {
                    match self.child.try_wait() {
                        Ok(Some(s)) => {
                            self.status = Some(s);
                            return Some(s);
                        }
                        Ok(None) => std::thread::sleep(POLL),
                        Err(_) => break,
                    }
                }
            }
        }
        let _ = self.child.kill();
        self.status = self.child.wait().ok();
        self.status
    }

    /// Its captured standard output and error (after it exited; whatever
    /// arrived within [`DRAIN`]).
    pub fn output(&mut self) -> (String, String) {
        (drain(self.out.take()), drain(self.err.take()))
    }

    /// The last non-empty line of its standard error (after it exited), or
    /// an empty string.
    pub fn last_error_line(&mut self) -> String {
        let (_, err) = self.output();
        last_line(&err).to_string()
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last non-empty line of `text`, trimmed (progress output separates
/// its lines with carriage returns).
pub fn last_line(text: &str) -> &str {
    text.split(['\n', '\r']).map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("")
}

/// Send `SIGINT` to `pid` (through kill(1): the standard library sends only
/// `SIGKILL`); whether it was sent.
fn sigint(pid: u32) -> bool {
    Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A thread reading `r` to its end, keeping the last [`KEEP`] bytes.
fn reader(mut r: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > 2 * KEEP {
                        kept.drain(..kept.len() - KEEP);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if kept.len() > KEEP {
            kept.drain(..kept.len() - KEEP);
        }
        kept
    })
}

/// What a reader thread read, if it finishes within [`DRAIN`].
fn drain(h: Option<JoinHandle<Vec<u8>>>) -> String {
    let Some(h) = h else { return String::new() };
    let t0 = Instant::now();
    while !h.is_finished() && t0.elapsed() < DRAIN {
        std::thread::sleep(POLL);
    }
    if !h.is_finished() {
        return String::new();
    }
    h.join().map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_line_skips_blank_and_carriage_returns() {
        assert_eq!(last_line("a\nb\r c \n\n"), "c");
        assert_eq!(last_line(""), "");
    }

    #[test]
    fn a_dropped_child_is_reaped() {
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let Ok(mut c) = Child::spawn("sleep", &mut cmd, false, Stop::Interrupt(Duration::from_secs(5))) else {
            return;
        };
        assert!(c.exited().expect("poll").is_none());
        // sleep(1) dies of SIGINT, or of SIGKILL after the bound where it
        // inherited SIGINT ignored (a background job of a non-interactive
        // shell): either way it is reaped, killed by a signal.
        let status = c.stop().expect("reaped");
        use std::os::unix::process::ExitStatusExt;
        assert!(status.signal().is_some(), "{status:?}");
        assert_eq!(c.exited().expect("poll"), Some(status));
    }

    #[test]
    fn captured_output_is_returned() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2"]);
        let Ok(mut c) = Child::spawn("sh", &mut cmd, true, Stop::Kill) else { return };
        let t0 = Instant::now();
        let s = loop {
            match c.exited().expect("poll") {
                Some(s) => break s,
                None if t0.elapsed() < Duration::from_secs(10) => std::thread::sleep(POLL),
                None => panic!("sh did not exit"),
            }
        };
        assert!(s.success());
        let (out, err) = c.output();
        assert_eq!(out.trim(), "out");
        assert_eq!(err.trim(), "err");
    }
}
