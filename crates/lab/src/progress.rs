//! Progress bars for long runs (shown only when stderr is a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// A progress bar over `total` steps, labelled `what`; hidden when stderr is
/// not a terminal, so piped JSON stays clean.
pub fn bar(total: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} {msg} (eta {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    pb
}
