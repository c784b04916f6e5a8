//! How the subsystems are locked (`--subsystem-locking`).

/// The locking policy of the sysctl tree and the kernel log (seed `003`'s
/// experiment; see `docs/subsystems.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SubsystemLocking {
    /// Under the whole-kernel lock (`bkl`'s lock; `fine`'s write side;
    /// `lockfree`'s management gate), and no lock of their own.
    Giant,
    /// Beside the rest of the kernel (`fine`'s read side, `lockfree`'s
    /// shared path; under `bkl` the big lock is held anyway), each with
    /// its own lock: an sx lock for the sysctl tree (shared to read,
    /// exclusive to change), the "sysctl mem" lock for copy-outs longer
    /// than a page, a mutex for the log ring.
    #[default]
    Sx,
    /// As `sx`, but the sysctl lock taken exclusively at every access
    /// point (each node a lookup visits, the value read, the copy-out)
    /// instead of once, shared (seed `003` §5.4).
    Improper,
    /// No lock of their own: the tree read without locks and changed by
    /// compare-and-swap, the ring a lock-free queue (seed `004`).
    LockFree,
}

impl SubsystemLocking {
    /// Every policy, in the order the study reports them.
    pub const ALL: [SubsystemLocking; 4] = [Self::Giant, Self::Sx, Self::Improper, Self::LockFree];

    /// The policy's name on the command line and in records.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Giant => "giant",
            Self::Sx => "sx",
            Self::Improper => "improper",
            Self::LockFree => "lockfree",
        }
    }

    /// The policy named `s`.
    pub fn from_name(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

impl core::fmt::Display for SubsystemLocking {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
