//! Redis's glob patterns: what `KEYS`, `SCAN ... MATCH` and `CONFIG GET`
//! match names against.
//!
//! The language is Redis's `stringmatchlen`: `*` matches any run of bytes,
//! `?` any one byte, `\x` the byte `x`, and `[...]` one byte from a class
//! (`^` first negates it, `a-z` is a range whose ends may come in either
//! order, `\x` inside is the byte `x`). Redis's quirks are kept, because
//! clients see them: a class left open at the end of the pattern ends
//! there, a range may end with `]` (so `[a-]` does not close at its `]`),
//! ranges compare bytes as C's signed `char`, a `\` that ends the pattern is
//! a literal backslash, and an empty text matches only the empty pattern
//! (`**` does not match the empty key; callers treat a pattern of exactly
//! `*` as "everything" first, as Redis does).
//!
//! Every element other than `*` matches exactly one byte, so the match runs
//! without recursion, backtracking to the last `*` only: linear space, and
//! time at most the product of the two lengths whatever the pattern.

/// Whether letters compare with their case (`KEYS`, `SCAN`) or without it
/// (`CONFIG GET`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `a` matches only `a`.
    Sensitive,
    /// `a` matches `a` and `A` (ASCII letters only, as C's `tolower`).
    Insensitive,
}

impl Case {
    fn fold(self, c: u8) -> u8 {
        match self {
            Case::Sensitive => c,
            Case::Insensitive => c.to_ascii_lowercase(),
        }
    }

    fn same(self, a: u8, b: u8) -> bool {
        self.fold(a) == self.fold(b)
    }
}

/// Whether `text` matches the glob `pattern`, as Redis's `stringmatchlen`.
pub fn glob_match(pattern: &[u8], text: &[u8], case: Case) -> bool {
    if text.is_empty() {
        return pattern.is_empty();
    }
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: the pattern after it, and the
    // text position its match would end at next.
    let mut resume: Option<(usize, usize)> = None;
    while t < text.len() {
        if pattern.get(p) == Some(&b'*') {
            while pattern.get(p) == Some(&b'*') {
                p += 1;
            }
            if p == pattern.len() {
                return true;
            }
            resume = Some((p, t));
            continue;
        }
        if p < pattern.len() {
            let (matched, used) = match_element(&pattern[p..], text[t], case);
            if matched {
                p += used;
                t += 1;
                continue;
            }
        }
        match resume {
            Some((after_star, from)) => {
                resume = Some((after_star, from + 1));
                p = after_star;
                t = from + 1;
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// Matches the byte `c` against the first element of `pattern` (not `*`):
/// whether it matches, and how many pattern bytes the element spans (which
/// never depends on `c`).
fn match_element(pattern: &[u8], c: u8, case: Case) -> (bool, usize) {
    match pattern[0] {
        b'?' => (true, 1),
        b'\\' if pattern.len() >= 2 => (case.same(pattern[1], c), 2),
        b'[' => match_class(pattern, c, case),
        literal => (case.same(literal, c), 1),
    }
}

/// Matches `c` against the class `[...]` at the start of `pattern`.
fn match_class(pattern: &[u8], c: u8, case: Case) -> (bool, usize) {
    let mut i = 1;
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut matched = false;
    loop {
        let left = pattern.len() - i;
        if left >= 2 && pattern[i] == b'\\' {
            // Redis compares an escaped byte with its case even in
            // case-insensitive matches.
            matched |= pattern[i + 1] == c;
            i += 2;
        } else if left == 0 {
            // An open class ends with the pattern.
            return (matched != negate, pattern.len());
        } else if pattern[i] == b']' {
            return (matched != negate, i + 1);
        } else if left >= 3 && pattern[i + 1] == b'-' {
            matched |= in_range(pattern[i], pattern[i + 2], c, case);
            i += 3;
        } else {
            matched |= case.same(pattern[i], c);
            i += 1;
        }
    }
}

/// Whether `c` lies in the range between `start` and `end` (either order),
/// compared as C's signed `char`, as Redis does.
fn in_range(start: u8, end: u8, c: u8, case: Case) -> bool {
    let signed = |b: u8| b as i8;
    let (mut low, mut high) = (signed(start), signed(end));
    if low > high {
        std::mem::swap(&mut low, &mut high);
    }
    let fold = |b: i8| signed(case.fold(b as u8));
    (fold(low)..=fold(high)).contains(&fold(signed(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sensitive(pattern: &str, text: &str) -> bool {
        glob_match(pattern.as_bytes(), text.as_bytes(), Case::Sensitive)
    }

    #[test]
    fn case_insensitive_matches_follow_redis() {
        for (pattern, text, expected) in [
            ("*", "save", true),
            ("sa*", "save", true),
            ("SAVE", "save", true),
            ("s?ve", "save", true),
            ("*only", "appendonly", true),
            ("[abc]ppendonly", "appendonly", true),
            ("[^a]ppendonly", "appendonly", false),
            ("[a-c]*", "save", false),
            ("[R-T]ave", "save", true),
            ("*a*e*", "save", true),
            ("s\\*", "s*", true),
            ("s\\*", "sa", false),
            ("", "", true),
            ("a*b*c*d*e*f*g*h*z", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false),
        ] {
            assert_eq!(
                glob_match(pattern.as_bytes(), text.as_bytes(), Case::Insensitive),
                expected,
                "{pattern} ~ {text}"
            );
        }
    }

    #[test]
    fn special_cases_follow_stringmatchlen() {
        for (pattern, text, expected) in [
            // Case matters.
            ("KEY", "key", false),
            ("[A-Z]", "k", false),
            // The empty text matches only the empty pattern.
            ("**", "", false),
            ("*", "", false),
            ("", "", true),
            ("", "a", false),
            // Stars.
            ("**a**", "xxa", true),
            ("a*", "a", true),
            ("a*?", "a", false),
            ("*a", "aaab", false),
            ("h*llo", "hllo", true),
            ("h*llo", "heeeello", true),
            // Escapes.
            ("\\", "\\", true),
            ("a\\", "a\\", true),
            ("\\?", "?", true),
            ("\\?", "a", false),
            ("\\\\", "\\", true),
            // Classes.
            ("h[ae]llo", "hello", true),
            ("h[^e]llo", "hello", false),
            ("h[^e]llo", "hallo", true),
            ("h[a-b]llo", "hbllo", true),
            ("h[b-a]llo", "hbllo", true),
            ("[]]", "]", false),
            ("[]]", "]]", false),
            ("[]", "x", false),
            ("[^]", "x", true),
            ("[\\]]", "]", true),
            ("[\\", "\\", true),
            ("[a-]", "-", false),
            ("[a-]", "_", true),
            ("[a-]x]", "`", true),
            ("[a-]x]", "x", true),
            ("[a-]x]", "]", true),
            ("[abc", "b", true),
            ("[abc", "d", false),
            ("[", "[", false),
            ("[^", "z", true),
            ("x[^", "x", false),
            ("[a-", "a", true),
            ("[a-", "-", true),
        ] {
            assert_eq!(sensitive(pattern, text), expected, "{pattern:?} ~ {text:?}");
        }
    }

    #[test]
    fn ranges_compare_signed_bytes() {
        // 0x00-0xff is, as signed chars, the range -1..=0.
        let pattern = b"[\x00-\xff]";
        assert!(glob_match(pattern, b"\x00", Case::Sensitive));
        assert!(glob_match(pattern, b"\xff", Case::Sensitive));
        assert!(!glob_match(pattern, b"a", Case::Sensitive));
        assert!(glob_match(b"[\x80-\x7f]", b"a", Case::Sensitive));
    }

    #[test]
    fn long_patterns_stay_linear() {
        let text = vec![b'a'; 5000];
        let mut pattern = b"*a".repeat(2000);
        pattern.push(b'b');
        assert!(!glob_match(&pattern, &text, Case::Sensitive));
    }
}
