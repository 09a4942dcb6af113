//! The `--json` output: each bench prints one JSON object on one line, serialized by serde from
//! its result types. Figures keep the precision the benches have always printed (microseconds
//! to three decimals, say) through the `serialize_with` helpers here; a figure that is not a
//! finite number is `null`.

use serde::{Serialize, Serializer};

/// `value` as one line of JSON.
pub fn to_line<T: Serialize>(value: &T) -> String {
    // Invariant: the benches' result types are plain structs, sequences and numbers with string
    // keys, which serde_json always serializes.
    serde_json::to_string(value).expect("internal bug: a bench result does not serialize")
}

/// Prints `value` as one line of JSON on stdout.
pub fn print<T: Serialize>(value: &T) {
    println!("{}", to_line(value));
}

/// `value` rounded to `decimals`; `None` unless finite.
fn rounded(value: f64, decimals: i32) -> Option<f64> {
    let scale = 10f64.powi(decimals);
    value.is_finite().then(|| (value * scale).round() / scale)
}

fn fixed<S: Serializer>(value: f64, decimals: i32, s: S) -> Result<S::Ok, S::Error> {
    match rounded(value, decimals) {
        Some(v) => s.serialize_f64(v),
        None => s.serialize_none(),
    }
}

/// A figure to 1 decimal.
pub fn fixed1<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    fixed(*value, 1, s)
}

/// A figure to 2 decimals.
pub fn fixed2<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    fixed(*value, 2, s)
}

/// A figure to 3 decimals.
pub fn fixed3<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    fixed(*value, 3, s)
}

/// A figure to 4 decimals.
pub fn fixed4<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    fixed(*value, 4, s)
}

/// An optional figure to 1 decimal (`null` for `None`).
pub fn fixed1_opt<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    fixed(value.unwrap_or(f64::NAN), 1, s)
}

/// An optional figure to 3 decimals (`null` for `None`).
pub fn fixed3_opt<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    fixed(value.unwrap_or(f64::NAN), 3, s)
}

/// An optional figure to 4 decimals (`null` for `None`).
pub fn fixed4_opt<S: Serializer>(value: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    fixed(value.unwrap_or(f64::NAN), 4, s)
}

/// Optional figures to 3 decimals.
pub fn fixed3_each<S: Serializer>(values: &[Option<f64>], s: S) -> Result<S::Ok, S::Error> {
    let rounded: Vec<Option<f64>> = values
        .iter()
        .map(|v| v.and_then(|v| rounded(v, 3)))
        .collect();
    rounded.serialize(s)
}

/// A setting such as a period or a duration as Rust writes it: whole numbers without a
/// fraction (`20`, not `20.0`), others in full (`2.5`).
pub fn number<S: Serializer>(value: &f64, s: S) -> Result<S::Ok, S::Error> {
    const EXACT: f64 = (1u64 << 53) as f64;
    if value.fract() == 0.0 && value.abs() < EXACT {
        s.serialize_i64(*value as i64)
    } else if value.is_finite() {
        s.serialize_f64(*value)
    } else {
        s.serialize_none()
    }
}

/// Settings as [`number`] writes one.
pub fn numbers<S: Serializer>(values: &[f64], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Number(#[serde(serialize_with = "number")] f64);
    let values: Vec<Number> = values.iter().map(|&v| Number(v)).collect();
    values.serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Figures {
        #[serde(serialize_with = "fixed3")]
        p50_us: f64,
        #[serde(serialize_with = "fixed3")]
        missing: f64,
        #[serde(serialize_with = "number")]
        period_ms: f64,
        #[serde(serialize_with = "numbers")]
        periods_ms: Vec<f64>,
        #[serde(serialize_with = "fixed3_each")]
        ratios: Vec<Option<f64>>,
    }

    #[test]
    fn figures_keep_their_precision_and_settings_read_as_written() {
        let line = to_line(&Figures {
            p50_us: 12.345_678,
            missing: f64::NAN,
            period_ms: 20.0,
            periods_ms: vec![20.0, 2.5],
            ratios: vec![Some(1.0 / 3.0), None],
        });
        assert_eq!(
            line,
            "{\"p50_us\":12.346,\"missing\":null,\"period_ms\":20,\"periods_ms\":[20,2.5],\
             \"ratios\":[0.333,null]}"
        );
    }
}
