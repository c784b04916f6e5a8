//! How a reply of granule is compared with Redis's where the bytes need
//! not be the same: elements in hash-table order, clock readings, random
//! picks.

/// How a command's reply is compared.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Byte for byte.
    Exact,
    /// As sorted elements (members of a Redis hash-table set).
    Unordered,
    /// A clock reading: negative integers byte for byte, positive ones as
    /// "positive" (the two servers' clocks differ by the time between
    /// their replies).
    Clock,
    /// A random pick: the reply's types and counts, not its elements.
    Shape,
}

impl Order {
    /// Whether two replies to a command drawn with this order agree.
    pub fn same(self, ours: &[u8], theirs: &[u8]) -> bool {
        match self {
            Order::Exact => ours == theirs,
            Order::Unordered => tokens(ours) == tokens(theirs),
            Order::Clock => clock(ours) == clock(theirs),
            Order::Shape => shape(ours) == shape(theirs),
        }
    }
}

/// A reply's lines, sorted: the same elements in any order give the same
/// lines (the header line says the count and the type).
pub fn tokens(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut lines: Vec<&str> = text.split("\r\n").collect();
    lines.sort_unstable();
    lines.join(" ")
}

/// A clock reading as compared: an integer reply above 0 as `:+`, any
/// other reply as it is.
fn clock(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    match text.strip_prefix(':').and_then(|n| n.trim_end().parse::<i64>().ok()) {
        Some(n) if n > 0 => b":+\r\n".to_vec(),
        _ => bytes.to_vec(),
    }
}

/// A reply's shape: its lines' types and the counts of its aggregates,
/// without the strings, numbers and lengths of the elements in it.
fn shape(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.split("\r\n");
    let mut out = Vec::new();
    while let Some(l) = lines.next() {
        let Some(kind) = l.chars().next() else { continue };
        match kind {
            // Aggregates (array, map, set) with their counts, nulls, nil
            // strings and errors, byte for byte.
            '*' | '%' | '~' | '_' | '-' => out.push(l.to_owned()),
            '$' if l == "$-1" => out.push(l.to_owned()),
            // A string's length and bytes say which member it is.
            '$' | '=' => {
                out.push(kind.to_string());
                lines.next();
            }
            // An integer, a double or a status: its type.
            _ => out.push(kind.to_string()),
        }
    }
    out.join(" ")
}
