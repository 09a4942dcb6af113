//! Order statistics of samples: [`Summary`] of latencies, [`Distribution`] of signed values
//! (send jitter), and the medians the benches judge goals on.

use std::time::Duration;

/// Order statistics of a set of durations, in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub count: usize,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub stddev_us: f64,
}

impl Summary {
    /// `None` for an empty sample set.
    pub fn of(samples: &[Duration]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let count = us.len();
        let mean = us.iter().sum::<f64>() / count as f64;
        let variance = us.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / count as f64;
        // Nearest-rank percentiles.
        let rank = |p: f64| us[((p * count as f64).ceil() as usize).clamp(1, count) - 1];
        Some(Self {
            count,
            min_us: us[0],
            mean_us: mean,
            p50_us: rank(0.50),
            p99_us: rank(0.99),
            max_us: us[count - 1],
            stddev_us: variance.sqrt(),
        })
    }

    /// Of samples given in microseconds.
    pub fn of_us(us: &[f64]) -> Option<Self> {
        let samples: Vec<Duration> = us
            .iter()
            .map(|u| Duration::from_secs_f64(u / 1e6))
            .collect();
        Self::of(&samples)
    }
}

/// Order statistics, in microseconds, of values that may be negative (nearest-rank
/// percentiles, as [`Summary`]'s), with the quartiles and the 1st percentile a box plot needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Distribution {
    pub count: usize,
    pub min: f64,
    pub p1: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

impl Distribution {
    /// `None` for no values.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let rank = |p: f64| v[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        Some(Self {
            count: n,
            min: v[0],
            p1: rank(0.01),
            p25: rank(0.25),
            p50: rank(0.50),
            p75: rank(0.75),
            p99: rank(0.99),
            max: v[n - 1],
            mean: v.iter().sum::<f64>() / n as f64,
        })
    }
}

/// The median of `values`, for an even count the upper of the two middle values; `None` when
/// empty. NaNs sort last.
pub fn upper_median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// Which of several rounds to report: the one whose ratio is the median of those with a ratio
/// (for an even count the upper middle, the one less flattering to roslite); `None` when no
/// round has one. The UDP run judges roslite against Cyclone so, the sweep its floor goals.
pub fn median_round(ratios: &[Option<f64>]) -> Option<usize> {
    let median = upper_median(ratios.iter().flatten().copied().collect())?;
    ratios
        .iter()
        .position(|r| r.is_some_and(|r| r.total_cmp(&median).is_eq()))
}

/// The count-weighted median of `(value, weight)`.
pub fn weighted_median(mut values: Vec<(f64, u64)>) -> Option<f64> {
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    for (value, weight) in values {
        seen += weight;
        if seen * 2 >= total {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!(
            (s.min_us, s.p50_us, s.p99_us, s.max_us),
            (1.0, 50.0, 99.0, 100.0)
        );
        assert!((s.mean_us - 50.5).abs() < 1e-9);
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn distributions_take_negative_values() {
        let s = Distribution::of(&[-2.0, 1.0, 3.0, 10.0]).unwrap();
        assert_eq!((s.min, s.p50, s.p99, s.max), (-2.0, 1.0, 10.0, 10.0));
        assert!(Distribution::of(&[]).is_none());
    }

    #[test]
    fn upper_median_takes_the_less_flattering_middle() {
        assert_eq!(upper_median(vec![]), None);
        assert_eq!(upper_median(vec![2.0, 0.5, 1.0]), Some(1.0));
        assert_eq!(upper_median(vec![1.5, 0.5]), Some(1.5));
    }

    #[test]
    fn median_round_skips_rounds_without_a_ratio() {
        assert_eq!(
            median_round(&[Some(2.0), None, Some(0.8), Some(1.0)]),
            Some(3)
        );
        assert_eq!(median_round(&[None, None]), None);
    }

    #[test]
    fn weighted_median_follows_counts() {
        assert_eq!(
            weighted_median(vec![(1.0, 1), (5.0, 10), (9.0, 1)]),
            Some(5.0)
        );
        assert_eq!(weighted_median(vec![]), None);
    }
}
