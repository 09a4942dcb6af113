//! Sizes and durations: parsed from the command line, labelled in tables and charts.

use std::time::Duration;

use super::pingpong::SEQ_LEN;

/// Parses `64`, `1k`, `1KiB`, `4M`, `4MiB` (k and M are powers of 1024 here, as in `ddsperf`);
/// a size must have room for a ping's sequence number.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: usize = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size; write it like 64, 1KiB or 4MiB"))?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "k" | "K" | "KiB" | "kB" => 1 << 10,
        "M" | "MiB" | "MB" => 1 << 20,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{text}'; use B, KiB or MiB"
            ))
        }
    };
    let size = value
        .checked_mul(scale)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    if size < SEQ_LEN {
        return Err(format!(
            "'{text}' is too small: a ping carries an {SEQ_LEN}-byte sequence number"
        ));
    }
    Ok(size)
}

/// `64 B`, `1 KiB`, `4 MiB`, `1.5 KiB`.
pub fn size_label(size: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (scale, unit) in UNITS {
        if size >= scale {
            // Scales are powers of two (and `is_multiple_of` is newer than the MSRV).
            return if size & (scale - 1) == 0 {
                format!("{} {unit}", size / scale)
            } else {
                format!("{:.1} {unit}", size as f64 / scale as f64)
            };
        }
    }
    format!("{size} B")
}

/// Parses `10ms`, `500us`, `1.5s`, `2m`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a duration; write it like 10ms, 500us or 60s"))?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "" => 1.0,
        "m" | "min" => 60.0,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{text}'; use ns, us, ms, s or m"
            ))
        }
    };
    let seconds = value * scale;
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(format!("'{text}' must be a positive duration"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A bare number is milliseconds (`500`); otherwise as [`parse_duration`] (`500us`, `1s`).
pub fn parse_period(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        parse_duration(&format!("{text}ms"))
    } else {
        parse_duration(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("1KiB"), Ok(1024));
        assert_eq!(parse_size("4M"), Ok(4 << 20));
        assert!(parse_size("4").unwrap_err().contains("too small"));
        assert!(parse_size("3 furlongs")
            .unwrap_err()
            .contains("unknown unit"));
        assert_eq!(size_label(64), "64 B");
        assert_eq!(size_label(65536), "64 KiB");
        assert_eq!(size_label(4 << 20), "4 MiB");
        assert_eq!(size_label(1536), "1.5 KiB");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("10 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("0ms").is_err());
    }

    #[test]
    fn periods_default_to_milliseconds() {
        assert_eq!(parse_period("500"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_period("2.5"), Ok(Duration::from_micros(2500)));
        assert_eq!(parse_period("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_period("1s"), Ok(Duration::from_secs(1)));
        assert!(parse_period("0").is_err());
    }
}
