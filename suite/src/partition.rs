//! Sharding across CI machines, as nextest does: `--partition hash:M/N` keeps the tests
//! whose stable name hash falls in shard M of N; `--partition count:M/N` deals the selected
//! tests out in turn (even shards, but a shard changes when tests are added). Every shard
//! makes its own shared fixtures, lazily, as any run does.

use crate::settings::ConfigError;

/// How the tests are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partition {
    /// By a stable hash of the test name (FNV-1a, 64 bit): a test stays in its shard.
    Hash {
        /// The shard, 1..=total.
        shard: u64,
        /// Number of shards.
        total: u64,
    },
    /// Round robin over the selected tests in name order.
    Count {
        /// The shard, 1..=total.
        shard: u64,
        /// Number of shards.
        total: u64,
    },
}

impl Partition {
    /// Parses `hash:M/N` or `count:M/N` with 1 <= M <= N.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let bad = |why: &str| {
            ConfigError(format!(
                "--partition `{text}` {why}; write hash:M/N or count:M/N with 1 <= M <= N (e.g. hash:1/3)"
            ))
        };
        let (kind, rest) = text.split_once(':').ok_or_else(|| bad("has no kind"))?;
        let (m, n) = rest.split_once('/').ok_or_else(|| bad("has no M/N"))?;
        let num = |s: &str| {
            s.parse::<u64>()
                .ok()
                .filter(|_| s.bytes().all(|b| b.is_ascii_digit()))
        };
        let (Some(shard), Some(total)) = (num(m), num(n)) else {
            return Err(bad("has a shard that is not a number"));
        };
        if total == 0 || shard == 0 || shard > total {
            return Err(bad("is out of range"));
        }
        match kind {
            "hash" => Ok(Partition::Hash { shard, total }),
            "count" => Ok(Partition::Count { shard, total }),
            _ => Err(bad("has an unknown kind")),
        }
    }

    /// Keeps the names of this shard; `names` in a stable order (the catalog's).
    pub fn select<T>(&self, items: Vec<T>, name: impl Fn(&T) -> &str) -> Vec<T> {
        match *self {
            Partition::Hash { shard, total } => items
                .into_iter()
                .filter(|t| fnv1a(name(t).as_bytes()) % total == shard - 1)
                .collect(),
            Partition::Count { shard, total } => {
                let mut sorted: Vec<(String, T)> = items
                    .into_iter()
                    .map(|t| (name(&t).to_string(), t))
                    .collect();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                sorted
                    .into_iter()
                    .enumerate()
                    .filter(|(i, _)| *i as u64 % total == shard - 1)
                    .map(|(_, (_, t))| t)
                    .collect()
            }
        }
    }
}

impl std::fmt::Display for Partition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Partition::Hash { shard, total } => write!(f, "hash:{shard}/{total}"),
            Partition::Count { shard, total } => write!(f, "count:{shard}/{total}"),
        }
    }
}

/// FNV-1a, 64 bit: stable across platforms, releases and runs.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(
            Partition::parse("hash:2/3").unwrap(),
            Partition::Hash { shard: 2, total: 3 }
        );
        assert_eq!(
            Partition::parse("count:1/1").unwrap(),
            Partition::Count { shard: 1, total: 1 }
        );
        for bad in [
            "hash:0/3",
            "hash:4/3",
            "hash:1/0",
            "hash:1",
            "hash:a/3",
            "slice:1/2",
            "1/2",
            "hash:+1/2",
            "",
        ] {
            assert!(Partition::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shards_cover_every_name_once() {
        let names: Vec<String> = (0..500)
            .map(|i| format!("g{}::e{i}::bare", i % 7))
            .collect();
        for kind in ["hash", "count"] {
            let mut seen = Vec::new();
            for m in 1..=4 {
                let p = Partition::parse(&format!("{kind}:{m}/4")).unwrap();
                let shard = p.select(names.clone(), |s| s.as_str());
                assert!(shard.len() > 60, "{kind} {m}: {}", shard.len());
                seen.extend(shard);
            }
            seen.sort();
            let mut all = names.clone();
            all.sort();
            assert_eq!(seen, all, "{kind}");
        }
        assert_eq!(fnv1a(b"runs::show::bare"), fnv1a(b"runs::show::bare"));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
    }
}
