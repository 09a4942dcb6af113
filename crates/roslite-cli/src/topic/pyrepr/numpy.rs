//! `repr()` of a one-dimensional numpy array, as rclpy holds a fixed-size array of numbers
//! (`int32[3]`, `float32[9]`, `char[4]`), with numpy 2's default print options: 75 columns,
//! 8 digits of precision in `maxprec` mode, no suppression of small numbers, arrays of more
//! than 1000 elements summarized to their first and last 3.
//!
//! The layout (numpy `arrayprint`): every element is formatted to a common width, the line
//! wraps before an element that would pass column 74 and continues under the first element,
//! and a `dtype=` numpy cannot infer from the digits (all but `int64` and `float64`) follows
//! on the same line if it fits in 75 columns, else on a line of its own.

/// The numbers of one array, in the type numpy holds them in.
pub(super) enum Numbers {
    /// Integers and their dtype name (`int8` ... `uint64`; `uint8` for `char` too).
    Int(Vec<i128>, &'static str),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
}

const LINE_WIDTH: usize = 75;
const PRECISION: usize = 8;
const THRESHOLD: usize = 1000;
const EDGE_ITEMS: usize = 3;
const PREFIX: &str = "array(";

/// `repr(numpy.array(...))`.
pub(super) fn array_repr(numbers: &Numbers) -> String {
    let (len, words, dtype) = formatted(numbers);
    let body = layout(&words, len > THRESHOLD, PREFIX.len(), ", ");
    let mut extras = Vec::new();
    if len > THRESHOLD {
        extras.push(format!("shape=({len},)"));
    }
    // numpy infers these two from the digits; a 0-length array never occurs (ROS arrays have
    // at least one element).
    if !matches!(dtype, "int64" | "float64") {
        extras.push(format!("dtype={dtype}"));
    }
    if extras.is_empty() {
        return format!("{PREFIX}{body})");
    }
    let head = format!("{PREFIX}{body},");
    let extra = format!("{})", extras.join(", "));
    let last_line = head.len() - head.rfind('\n').map_or(0, |i| i + 1);
    let spacer = if last_line + extra.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(PREFIX.len()))
    } else {
        " ".to_owned()
    };
    format!("{head}{spacer}{extra}")
}

/// `str(numpy.array(...))`: the elements only, separated by spaces (`[  0 255   0]`).
pub(super) fn array_str(numbers: &Numbers) -> String {
    let (len, words, _) = formatted(numbers);
    layout(&words, len > THRESHOLD, 0, " ")
}

/// The length of the array, its shown elements formatted to one width, and its dtype.
fn formatted(numbers: &Numbers) -> (usize, Vec<String>, &'static str) {
    match numbers {
        Numbers::Int(values, dtype) => {
            let shown = summarized(values);
            let format = IntFormat::new(&shown);
            (
                values.len(),
                shown.iter().map(|v| format.format(*v)).collect(),
                *dtype,
            )
        }
        Numbers::Float32(values) => {
            let shown = summarized(values);
            let format = FloatFormat::new(&shown);
            (
                values.len(),
                shown.iter().map(|v| format.format(*v)).collect(),
                "float32",
            )
        }
        Numbers::Float64(values) => {
            let shown = summarized(values);
            let format = FloatFormat::new(&shown);
            (
                values.len(),
                shown.iter().map(|v| format.format(*v)).collect(),
                "float64",
            )
        }
    }
}

/// The elements numpy formats: all, or the first and last `EDGE_ITEMS` of a long array.
fn summarized<T: Copy>(values: &[T]) -> Vec<T> {
    if values.len() > THRESHOLD {
        let mut shown = values[..EDGE_ITEMS].to_vec();
        shown.extend_from_slice(&values[values.len() - EDGE_ITEMS..]);
        shown
    } else {
        values.to_vec()
    }
}

/// `[a, b, ...]` wrapped as numpy's `_formatArray` wraps one row after a prefix of
/// `prefix_len` characters (character counts are bytes: every formatted number is ASCII).
fn layout(words: &[String], summary: bool, prefix_len: usize, separator: &str) -> String {
    // Continuation lines start under the first element: past the prefix and "[".
    let indent = " ".repeat(prefix_len + 1);
    // Room for the separator's "," or the closing "]".
    let width = LINE_WIDTH - 1;
    let mut out = String::new();
    let mut line = indent.clone();
    let extend = |out: &mut String, line: &mut String, word: &str| {
        if line.len() + word.len() > width && line.len() > indent.len() {
            out.push_str(line.trim_end());
            out.push('\n');
            *line = indent.clone();
        }
        line.push_str(word);
    };
    let (leading, trailing) = if summary {
        (&words[..EDGE_ITEMS], &words[EDGE_ITEMS..])
    } else {
        (&words[..0], words)
    };
    for word in leading {
        extend(&mut out, &mut line, word);
        line.push_str(separator);
    }
    if summary {
        extend(&mut out, &mut line, "...");
        line.push_str(separator);
    }
    if let Some((last, rest)) = trailing.split_last() {
        for word in rest {
            extend(&mut out, &mut line, word);
            line.push_str(separator);
        }
        extend(&mut out, &mut line, last);
    }
    out.push_str(&line);
    format!("[{}]", &out[indent.len()..])
}

/// numpy's `IntegerFormat`: right-aligned to the widest of the largest and smallest.
struct IntFormat {
    width: usize,
}

impl IntFormat {
    fn new(values: &[i128]) -> Self {
        let max = values.iter().max().map_or(0, |v| v.to_string().len());
        let min = values.iter().min().map_or(0, |v| v.to_string().len());
        IntFormat {
            width: max.max(min),
        }
    }

    fn format(&self, value: i128) -> String {
        format!("{value:>width$}", width = self.width)
    }
}

/// A float type numpy prints: its own shortest digits, and how it compares.
pub(super) trait Float: Copy + PartialOrd + std::fmt::Display + std::fmt::LowerExp {
    /// `numpy.finfo(dtype).precision`: 6 for float32, 15 for float64.
    const DECIMAL_PRECISION: i32;
    fn is_finite(self) -> bool;
    fn is_nan(self) -> bool;
    fn is_sign_negative(self) -> bool;
    fn abs(self) -> Self;
    fn is_zero(self) -> bool;
    /// Whether numpy would switch to scientific notation for these magnitudes. numpy 2 does
    /// the arithmetic in the array's own type (a Python float is "weak", NEP 50).
    fn wants_exponent(max: Self, min: Self) -> bool;
}

impl Float for f32 {
    const DECIMAL_PRECISION: i32 = 6;
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn is_sign_negative(self) -> bool {
        f32::is_sign_negative(self)
    }
    fn abs(self) -> Self {
        f32::abs(self)
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn wants_exponent(max: Self, min: Self) -> bool {
        let cutoff = 10f32.powi(Self::DECIMAL_PRECISION.min(8));
        max >= cutoff || min < 0.0001 || max / min > 1000.0
    }
}

impl Float for f64 {
    const DECIMAL_PRECISION: i32 = 15;
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn is_sign_negative(self) -> bool {
        f64::is_sign_negative(self)
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn wants_exponent(max: Self, min: Self) -> bool {
        let cutoff = 10f64.powi(Self::DECIMAL_PRECISION.min(8));
        max >= cutoff || min < 0.0001 || max / min > 1000.0
    }
}

/// numpy's `FloatingFormat` in `maxprec` mode: positional with up to 8 fractional digits, or
/// scientific with as many mantissa digits as the longest shortest-repr needs, every element
/// padded to one width.
struct FloatFormat {
    scientific: bool,
    /// Mantissa digits after the point (scientific).
    mantissa_digits: usize,
    /// Exponent digits (scientific).
    exponent_digits: usize,
    pad_left: usize,
    pad_right: usize,
}

impl FloatFormat {
    fn new<F: Float>(values: &[F]) -> Self {
        let finite: Vec<F> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let mut magnitudes = finite.iter().filter(|v| !v.is_zero()).map(|v| v.abs());
        let scientific = match magnitudes.next() {
            Some(first) => {
                let (max, min) = magnitudes.fold((first, first), |(max, min), v| {
                    (if v > max { v } else { max }, if v < min { v } else { min })
                });
                F::wants_exponent(max, min)
            }
            None => false,
        };
        let mut format = FloatFormat {
            scientific,
            mantissa_digits: 0,
            exponent_digits: 0,
            pad_left: 0,
            pad_right: 0,
        };
        if finite.is_empty() {
            // numpy's pad_left and pad_right of 0: only nan and inf, each as it is.
        } else if scientific {
            let parts: Vec<Scientific> = finite.iter().map(|v| scientific_unique(*v)).collect();
            format.mantissa_digits = parts.iter().map(|p| p.fraction.len()).max().unwrap_or(0);
            format.exponent_digits = parts.iter().map(|p| p.exponent_digits()).max().unwrap_or(2);
            format.pad_left = parts.iter().map(|p| p.integer.len()).max().unwrap_or(0);
            format.pad_right = format.exponent_digits + 2 + format.mantissa_digits;
        } else {
            let parts: Vec<(String, String)> =
                finite.iter().map(|v| positional_unique(*v)).collect();
            format.pad_left = parts.iter().map(|(i, _)| i.len()).max().unwrap_or(0);
            format.pad_right = parts.iter().map(|(_, f)| f.len()).max().unwrap_or(0);
        }
        if finite.len() != values.len() {
            let negative_infinity = values
                .iter()
                .any(|v| !v.is_finite() && !v.is_nan() && v.is_sign_negative());
            let offset = format.pad_right + 1;
            let nan = 3usize.saturating_sub(offset);
            let inf = (3 + usize::from(negative_infinity)).saturating_sub(offset);
            format.pad_left = format.pad_left.max(nan).max(inf);
        }
        format
    }

    fn format<F: Float>(&self, value: F) -> String {
        if !value.is_finite() {
            let text = if value.is_nan() {
                "nan"
            } else if value.is_sign_negative() {
                "-inf"
            } else {
                "inf"
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{text:>width$}");
        }
        if self.scientific {
            // Exactly `mantissa_digits` digits of the exact value, rounded half to even.
            let text = format!("{value:.prec$e}", prec = self.mantissa_digits);
            let part = Scientific::parse(&text);
            format!(
                "{:>pad$}.{}e{}{:0>digits$}",
                part.integer,
                part.fraction,
                if part.exponent < 0 { '-' } else { '+' },
                part.exponent.unsigned_abs(),
                pad = self.pad_left,
                digits = self.exponent_digits
            )
        } else {
            let (integer, fraction) = positional_unique(value);
            format!(
                "{integer:>left$}.{fraction:<right$}",
                left = self.pad_left,
                right = self.pad_right
            )
        }
    }
}

/// A number in scientific notation, split: `-1`, `25`, `-7` for `-1.25e-07`.
struct Scientific {
    integer: String,
    fraction: String,
    exponent: i32,
}

impl Scientific {
    /// From Rust's `{:e}` text (`-1.25e-7`, `3e38`).
    fn parse(text: &str) -> Self {
        let (mantissa, exponent) = text.split_once('e').unwrap_or((text, "0"));
        let (integer, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        Scientific {
            integer: integer.to_owned(),
            fraction: fraction.to_owned(),
            exponent: exponent.parse().unwrap_or(0),
        }
    }

    /// numpy writes at least two exponent digits.
    fn exponent_digits(&self) -> usize {
        self.exponent.unsigned_abs().to_string().len().max(2)
    }
}

/// The shortest digits that identify `value` in its own type, cut to `PRECISION` mantissa
/// digits after the point if longer, trailing zeros trimmed (numpy's `trim='.'`).
fn scientific_unique<F: Float>(value: F) -> Scientific {
    let mut part = Scientific::parse(&format!("{value:e}"));
    if part.fraction.len() > PRECISION {
        part = Scientific::parse(&format!("{value:.PRECISION$e}"));
        let kept = part.fraction.trim_end_matches('0').len();
        part.fraction.truncate(kept);
    }
    part
}

/// The integer and fraction digits of `value` in positional notation: the shortest that
/// identify it in its own type, or if that needs more than `PRECISION` fractional digits,
/// the exact value rounded half to even to `PRECISION` (numpy's Dragon4 with a cutoff), with
/// trailing zeros trimmed. The integer part holds the sign (`-0` for negative zero).
fn positional_unique<F: Float>(value: F) -> (String, String) {
    let shortest = format!("{value}");
    let text = match shortest.split_once('.') {
        Some((_, fraction)) if fraction.len() > PRECISION => format!("{value:.PRECISION$}"),
        _ => shortest,
    };
    let (integer, fraction) = text.split_once('.').unwrap_or((&text, ""));
    (
        integer.to_owned(),
        fraction.trim_end_matches('0').to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each against what numpy 2.4 prints for the same array.
    #[test]
    fn arrays_print_like_numpy() {
        for (numbers, text) in [
            (
                Numbers::Int(vec![0, 255, 0], "uint8"),
                "array([  0, 255,   0], dtype=uint8)",
            ),
            (
                Numbers::Int(vec![0, 9223372036854775807, -9223372036854775808], "int64"),
                "array([                   0,  9223372036854775807, -9223372036854775808])",
            ),
            (
                Numbers::Int(vec![0, 18446744073709551615, 0], "uint64"),
                "array([                   0, 18446744073709551615,                    0],\n      \
                 dtype=uint64)",
            ),
            (
                Numbers::Float32(vec![0.0, 1.125, -2.125]),
                "array([ 0.   ,  1.125, -2.125], dtype=float32)",
            ),
            (Numbers::Float64(vec![0.0, 0.0, 0.0]), "array([0., 0., 0.])"),
            (
                Numbers::Float32(vec![0.1, f32::NAN, 1e-45]),
                "array([1.e-01,    nan, 1.e-45], dtype=float32)",
            ),
            (
                Numbers::Float64(vec![0.001953125, 1.0]),
                "array([0.00195312, 1.        ])",
            ),
            (
                Numbers::Float32(vec![0.3, 1.5e-7]),
                "array([3.0e-01, 1.5e-07], dtype=float32)",
            ),
            (
                Numbers::Float32(vec![-0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN]),
                "array([ -0.,   0.,  inf, -inf,  nan], dtype=float32)",
            ),
            (
                Numbers::Float64(vec![f64::NAN; 3]),
                "array([nan, nan, nan])",
            ),
            (
                Numbers::Float64(vec![1e300, 1e-300, 5e-324]),
                "array([1.e+300, 1.e-300, 5.e-324])",
            ),
            (
                Numbers::Float64(vec![9.999999999, 1.0]),
                "array([10.,  1.])",
            ),
            (
                Numbers::Float32(vec![f32::MAX, f32::MIN, f32::MIN_POSITIVE]),
                "array([ 3.4028235e+38, -3.4028235e+38,  1.1754944e-38], dtype=float32)",
            ),
            (
                Numbers::Int((0..=1000).collect(), "int32"),
                "array([   0,    1,    2, ...,  998,  999, 1000],\n      shape=(1001,), \
                 dtype=int32)",
            ),
            (
                Numbers::Float64(vec![1e6, 1.5]),
                "array([1.0e+06, 1.5e+00])",
            ),
        ] {
            assert_eq!(array_repr(&numbers), text);
        }
        assert_eq!(
            array_str(&Numbers::Int(vec![0, 255, 0], "uint8")),
            "[  0 255   0]"
        );
        assert_eq!(
            array_str(&Numbers::Float32(vec![0.0, 1.125, -2.125])),
            "[ 0.     1.125 -2.125]"
        );
    }
}
