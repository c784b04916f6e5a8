//! Message words in and out of the subsystem calls: names and values as a
//! length word then bytes packed little-endian, OIDs as a level count then
//! one word per level. Every read is bounded by the words the caller sent.

use alloc::string::String;
use alloc::vec::Vec;

use crate::abi::{Error, Word, SYSCTL_MAX_LEVELS};

/// Reads a request's words in order.
pub(crate) struct In<'a> {
    words: &'a [Word],
}

impl<'a> In<'a> {
    pub fn new(words: &'a [Word]) -> Self {
        Self { words }
    }

    /// The next word (`TruncatedMessage` past the end).
    pub fn word(&mut self) -> Result<Word, Error> {
        let (&w, rest) = self.words.split_first().ok_or(Error::TruncatedMessage)?;
        self.words = rest;
        Ok(w)
    }

    /// A length word then that many bytes (at most `max`: `TooLarge`).
    pub fn bytes(&mut self, max: usize) -> Result<Vec<u8>, Error> {
        let len = self.len(max)?;
        self.packed(len)
    }

    /// A length word at most `max`.
    pub fn len(&mut self, max: usize) -> Result<usize, Error> {
        let len = self.word()?;
        match usize::try_from(len) {
            Ok(l) if l <= max => Ok(l),
            _ => Err(Error::TooLarge),
        }
    }

    /// `len` bytes packed into the next words.
    pub fn packed(&mut self, len: usize) -> Result<Vec<u8>, Error> {
        let n = len.div_ceil(8);
        if self.words.len() < n {
            return Err(Error::TruncatedMessage);
        }
        let (used, rest) = self.words.split_at(n);
        self.words = rest;
        let mut out: Vec<u8> = used.iter().flat_map(|w| w.to_le_bytes()).collect();
        out.truncate(len);
        Ok(out)
    }

    /// A name: its bytes must be UTF-8 (`InvalidArgument`).
    pub fn name(&mut self, max: usize) -> Result<String, Error> {
        String::from_utf8(self.bytes(max)?).map_err(|_| Error::InvalidArgument)
    }

    /// An OID: 0..=`SYSCTL_MAX_LEVELS` levels of 32-bit numbers.
    pub fn oid(&mut self) -> Result<Vec<u32>, Error> {
        let levels = self.len(SYSCTL_MAX_LEVELS)?;
        (0..levels).map(|_| u32::try_from(self.word()?).map_err(|_| Error::InvalidArgument)).collect()
    }
}

/// Writes a reply's words in order, bounded by the message.
pub(crate) struct Out<'a> {
    words: &'a mut [Word],
    at: usize,
}

impl<'a> Out<'a> {
    pub fn new(words: &'a mut [Word]) -> Self {
        Self { words, at: 0 }
    }

    /// Words written.
    pub fn len(&self) -> usize {
        self.at
    }

    /// Words still free.
    pub fn room(&self) -> usize {
        self.words.len() - self.at
    }

    /// Append a word (the callers check `room`; past the end it is dropped
    /// and the reply is `TruncatedMessage`).
    pub fn word(&mut self, w: Word) -> Result<(), Error> {
        let slot = self.words.get_mut(self.at).ok_or(Error::TruncatedMessage)?;
        *slot = w;
        self.at += 1;
        Ok(())
    }

    /// Bytes packed into words (no length word).
    pub fn packed(&mut self, b: &[u8]) -> Result<(), Error> {
        for chunk in b.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.word(Word::from_le_bytes(w))?;
        }
        Ok(())
    }

    /// An OID.
    pub fn oid(&mut self, oid: &[u32]) -> Result<(), Error> {
        self.word(oid.len() as Word)?;
        oid.iter().try_for_each(|&n| self.word(Word::from(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_short_messages_are_truncated() {
        let mut buf = [0; 8];
        let mut o = Out::new(&mut buf);
        o.word(5).unwrap();
        o.packed(b"hello").unwrap();
        assert_eq!(o.len(), 2);
        let mut i = In::new(&buf[..2]);
        assert_eq!(i.bytes(16).unwrap(), b"hello");
        assert_eq!(In::new(&buf[..1]).bytes(16), Err(Error::TruncatedMessage));
        assert_eq!(In::new(&buf[..2]).bytes(4), Err(Error::TooLarge));
        assert_eq!(In::new(&[u64::MAX]).bytes(16), Err(Error::TooLarge));
        assert_eq!(In::new(&[2, 1, 1 << 40]).oid(), Err(Error::InvalidArgument));
        assert_eq!(In::new(&[99]).oid(), Err(Error::TooLarge));
    }
}
