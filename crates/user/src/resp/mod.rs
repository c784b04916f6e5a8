//! RESP2 protocol, the Redis-compatible store and its commands (placeholder: being written).
