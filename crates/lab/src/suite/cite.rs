//! Plain words for the report: the four papers the suite repeats named by
//! their authors and year (never by their number in this project), one name
//! for the machine of Elphinstone et al., and page text turned into HTML
//! with names in `<code>` instead of Markdown backticks.

use super::html::esc;

/// The papers this project repeats, by number (`001` … `004` in the
/// project's notes): `(authors, year, title)`.
pub const PAPERS: [(&str, u16, &str); 4] = [
    ("Elphinstone et al.", 2016, "An Evaluation of Coarse-Grained Locking for Multicore Microkernels"),
    ("Peters et al.", 2015, "For a Microkernel, a Big Lock Is Fine"),
    ("Toy", 2010, "Evaluating Locking Schemes in the FreeBSD Kernel"),
    ("Massalin & Pu", 1991, "A Lock-Free Multiprocessor OS Kernel"),
];

/// The one name the page gives the machine Elphinstone et al. measured on
/// (2 sockets × 14 cores × 2 hardware threads).
pub const SEEDS_MACHINE: &str = "Elphinstone et al.'s two-socket Xeon (28 cores, 56 threads)";

/// Paper `n` (1 to 4) as `Authors (year)`, e.g. `Elphinstone et al. (2016)`.
pub fn paper(n: usize) -> String {
    match n.checked_sub(1).and_then(|i| PAPERS.get(i)) {
        Some((authors, year, _)) => format!("{authors} ({year})"),
        None => format!("paper {n}"),
    }
}

/// Paper `n` with its title: `Elphinstone et al. (2016), "An Evaluation …"`.
pub fn paper_titled(n: usize) -> String {
    match n.checked_sub(1).and_then(|i| PAPERS.get(i)) {
        Some((_, _, title)) => format!("{}, \u{201c}{title}\u{201d}", paper(n)),
        None => paper(n),
    }
}

/// `text` with every "seed 00N" (also "seed `00N`" and "seed N") replaced by
/// the paper's authors and year, and "seed 00N's" by "Authors's (year)".
pub fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("seed ") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 5..];
        let digits_at = after.strip_prefix('`').unwrap_or(after);
        let n_len = digits_at.bytes().take_while(u8::is_ascii_digit).count();
        let n = digits_at[..n_len].parse::<usize>().ok().filter(|n| (1..=PAPERS.len()).contains(n));
        match n {
            Some(n) => {
                let mut tail = &digits_at[n_len..];
                tail = if digits_at.len() < after.len() { tail.strip_prefix('`').unwrap_or(tail) } else { tail };
                if let Some(t) = tail.strip_prefix("'s") {
                    let (authors, year, _) = PAPERS[n - 1];
                    out.push_str(&format!("{authors}'s ({year})"));
                    tail = t;
                } else {
                    out.push_str(&paper(n));
                }
                rest = tail;
            }
            None => {
                out.push_str("seed ");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Page text as HTML: [`plain`] words, escaped, each `name` in backticks
/// set in `<code>` (an unpaired backtick is dropped, never shown).
pub fn html(text: &str) -> String {
    let text = plain(text);
    let mut out = String::with_capacity(text.len() + 16);
    let mut parts = text.split('`').peekable();
    let mut code = false;
    while let Some(p) = parts.next() {
        let last = parts.peek().is_none();
        if code && !last {
            out.push_str("<code>");
            out.push_str(&esc(p));
            out.push_str("</code>");
        } else {
            out.push_str(&esc(p));
        }
        code = !code;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_are_named_by_authors_and_year() {
        assert_eq!(
            plain("as seed 001 found (seed `002` Figure 3)"),
            "as Elphinstone et al. (2016) found (Peters et al. (2015) Figure 3)"
        );
        assert_eq!(plain("seed 001's two-socket Xeon"), "Elphinstone et al.'s (2016) two-socket Xeon");
        assert_eq!(plain("seed 004 and seed 9 and the seeds'"), "Massalin & Pu (1991) and seed 9 and the seeds'");
        assert!(paper_titled(3).starts_with("Toy (2010), \u{201c}Evaluating Locking"));
    }

    #[test]
    fn backticks_become_code_and_text_is_escaped() {
        assert_eq!(html("per call `bkl` 28 < `fine`"), "per call <code>bkl</code> 28 &lt; <code>fine</code>");
        assert_eq!(html("one ` left"), "one  left");
        assert!(!html("a `b` c `d").contains('`'));
    }
}
