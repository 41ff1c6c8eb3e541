//! Durations and timestamps as users and targets write them: `--deadline 10m`,
//! `--older-than 24h`, RFC 3339 `created-at` values and the ledger's times.

use std::time::{Duration, SystemTime};

/// A number that differs from run to run: the clock, hashed with a random key (a run's
/// name prefix, a sequence seed without `--seed`).
pub fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

/// Parses `500ms`, `90s`, `10m`, `2h`, `7d` or a bare number of seconds (`1.5`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (e.g. 90s, 10m, 2h, 7d)"))?;
    let scale = match unit.trim() {
        "ms" => 0.001,
        "" | "s" | "sec" | "secs" => 1.0,
        "m" | "min" | "mins" => 60.0,
        "h" | "hour" | "hours" => 3600.0,
        "d" | "day" | "days" => 86_400.0,
        other => {
            return Err(format!(
                "`{text}`: unknown unit `{other}` (use ms, s, m, h or d)"
            ))
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || !(0.0..=10.0 * 365.0 * 86_400.0).contains(&secs) {
        return Err(format!("`{text}` is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A duration for people: `850 ms`, `12.3 s`, `4 m 05 s`.
pub fn human(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1.0 {
        format!("{} ms", d.as_millis())
    } else if secs < 120.0 {
        format!("{secs:.1} s")
    } else {
        let whole = d.as_secs();
        format!("{} m {:02} s", whole / 60, whole % 60)
    }
}

/// `time` as RFC 3339 in UTC with milliseconds (`2026-11-22T11:21:37.123Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let t = time::OffsetDateTime::from(time);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Parses an RFC 3339 timestamp (`2026-11-22T11:21:37Z`, fractions and offsets allowed).
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let parsed =
        time::OffsetDateTime::parse(text.trim(), &time::format_description::well_known::Rfc3339)
            .ok()?;
    (parsed >= time::OffsetDateTime::UNIX_EPOCH).then(|| parsed.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(604_800));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("ten minutes").is_err());
        assert!(parse_duration("5y").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn rfc3339_round_trips() {
        let t = UNIX_EPOCH + Duration::from_millis(1_795_000_000_123);
        let text = rfc3339(t);
        assert!(text.ends_with(".123Z"), "{text}");
        assert_eq!(parse_rfc3339(&text), Some(t));
        assert_eq!(
            parse_rfc3339("1970-01-02T00:00:00+01:00"),
            Some(UNIX_EPOCH + Duration::from_secs(82_800))
        );
        assert_eq!(
            parse_rfc3339("2000-03-01T00:00:00Z"),
            Some(UNIX_EPOCH + Duration::from_secs(951_868_800))
        );
        assert!(parse_rfc3339("yesterday").is_none());
    }
}
