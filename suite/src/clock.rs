//! Durations and timestamps as users and targets write them: `--deadline 10m`,
//! `--older-than 24h`, RFC 3339 `created-at` values and the ledger's times.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

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
    let d = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Parses an RFC 3339 timestamp (`2026-11-22T11:21:37Z`, fractions and offsets allowed).
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let t = text.trim();
    let b = t.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { t.get(r)?.parse().ok() };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let mut rest = &t[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(frac.len());
        let mut padded: String = frac[..digits].chars().take(9).collect();
        while padded.len() < 9 {
            padded.push('0');
        }
        nanos = padded.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let h: i64 = rest.get(1..3)?.parse().ok()?;
            let m: i64 = rest.get(4..6)?.parse().ok()?;
            sign * (h * 3600 + m * 60)
        }
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second.min(60) - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

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
