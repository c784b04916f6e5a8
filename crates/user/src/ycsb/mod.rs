//! The YCSB core workload generator (placeholder: being written).
